import { describe, expect, it } from 'vitest';
import { limiterAddress } from '../../src/util/client-ip.js';

describe('limiterAddress', () => {
  it('gives every spelling of an IPv4-mapped address the IPv4 bucket', () => {
    for (const ip of [
      '6.6.6.6',
      '::ffff:6.6.6.6',
      '::FFFF:6.6.6.6',
      '::ffff:0606:0606',
      '::ffff:606:606',
      '0:0:0:0:0:ffff:6.6.6.6',
      '0000:0000:0000:0000:0000:ffff:0606:0606',
    ])
      expect(limiterAddress(ip), ip).toBe('6.6.6.6');
  });

  it('cuts IPv6 to its /64 whatever the spelling, zone ids ignored', () => {
    for (const ip of [
      '2001:db8:1:2::a',
      '2001:0DB8:0001:0002:ffff::1',
      '2001:db8:1:2:0:0:0:0',
      '2001:db8:1:2::6.6.6.6',
      'fe80::1%eth0'.replace('fe80::1', '2001:db8:1:2::1'),
    ])
      expect(limiterAddress(ip), ip).toBe('2001:db8:1:2::/64');
    expect(limiterAddress('::1')).toBe('0:0:0:0::/64');
    expect(limiterAddress('::ffff:1:6.6.6.6')).toBe('0:0:0:0::/64');
  });

  it('leaves anything else as it is', () => {
    expect(limiterAddress('')).toBe('');
    expect(limiterAddress('not-an-ip')).toBe('not-an-ip');
  });
});
