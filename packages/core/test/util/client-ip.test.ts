import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { addressKey, clientIp, limiterAddress, proxyTest } from '../../src/util/client-ip.js';

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

describe('clientIp', () => {
  const trusted = (...entries: string[]) => proxyTest(entries);
  const req = (ip: string, xff?: string) => ({
    method: 'POST',
    path: '/auth/login',
    headers: xff === undefined ? {} : { 'x-forwarded-for': xff },
    ip,
  });

  it('knows a listed proxy in the spelling a dual-stack listener reports (IPv4-mapped IPv6)', () => {
    const proxies = trusted('127.0.0.1', '::1');
    expect(clientIp(req('::ffff:127.0.0.1', '203.0.113.7'), proxies)).toBe('203.0.113.7');
    expect(clientIp(req('127.0.0.1', '203.0.113.7'), proxies)).toBe('203.0.113.7');
    expect(clientIp(req('0:0:0:0:0:0:0:1', '203.0.113.8'), proxies)).toBe('203.0.113.8');
    // A listed proxy as a hop is skipped in any spelling; the first untrusted hop is the client.
    expect(clientIp(req('::1', '198.51.100.1, ::ffff:127.0.0.1'), proxies)).toBe('198.51.100.1');
  });

  it('keeps zone ids apart: a neighbour on another interface is another host', () => {
    expect(addressKey('fe80::1%eth0')).not.toBe(addressKey('fe80::1%eth1'));
    expect(addressKey('FE80:0:0:0:0:0:0:1%eth0')).toBe(addressKey('fe80::1%eth0'));
    expect(addressKey('not an address')).toBe('not an address');
  });

  it('ignores forwarded headers from anyone not listed', () => {
    expect(clientIp(req('::ffff:192.0.2.9', '203.0.113.7'), trusted('127.0.0.1'))).toBe('::ffff:192.0.2.9');
    expect(clientIp(req('192.0.2.9', '203.0.113.7'), trusted())).toBe('192.0.2.9');
  });

  it('takes CIDR ranges, IPv4 ones also in the IPv4-mapped spelling', () => {
    const proxies = trusted('10.0.0.0/8', 'fd00::/8', '192.0.2.1');
    expect(clientIp(req('10.200.3.4', '203.0.113.7'), proxies)).toBe('203.0.113.7');
    expect(clientIp(req('::ffff:10.200.3.4', '203.0.113.7'), proxies)).toBe('203.0.113.7');
    expect(clientIp(req('FD12:3456::1', '203.0.113.7'), proxies)).toBe('203.0.113.7');
    // Hops inside a range are proxies too; the first one outside is the client.
    expect(clientIp(req('10.0.0.1', '198.51.100.4, 10.9.9.9, fd00::2'), proxies)).toBe('198.51.100.4');
    expect(clientIp(req('11.0.0.1', '203.0.113.7'), proxies)).toBe('11.0.0.1');
    expect(clientIp(req('fe00::1', '203.0.113.7'), proxies)).toBe('fe00::1');
    expect(clientIp(req('not an address', '203.0.113.7'), proxies)).toBe('not an address');
    // A zone id is IPv6 only: an IPv4 hop with one is no address, so no proxy either.
    expect(clientIp(req('10.0.0.1', '198.51.100.4, 10.9.9.9%x'), proxies)).toBe('10.0.0.1');
    expect(clientIp(req('fe80::1%eth0', '203.0.113.7'), trusted('fe80::/10'))).toBe('203.0.113.7');
    // An IPv6 range over the IPv4-mapped block covers IPv4 peers (documented).
    expect(clientIp(req('192.0.2.1', '2001:db8::7'), trusted('::ffff:0:0/96'))).toBe('2001:db8::7');
  });

  it('refuses an entry that is neither an address nor a range, and trusts nobody by default', () => {
    for (const entry of [
      'localhost',
      '10.0.0.0/33',
      '::/129',
      '10.0.0.0/',
      '10.0.0.0/8/8',
      '10.0.0/8',
      'fe80::%eth0/64',
      '10.0.0.1%eth0',
      '',
    ])
      expect(() => proxyTest([entry]), entry).toThrow(ConfigError);
    expect(proxyTest([])).toBeNull();
    expect(clientIp(req('10.0.0.1', '203.0.113.7'), null)).toBe('10.0.0.1');
  });
});
