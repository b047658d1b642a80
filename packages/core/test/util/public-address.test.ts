import { describe, expect, it } from 'vitest';
import { isPublicAddress, publicOnlyLookup } from '../../src/util/public-address.js';

describe('isPublicAddress', () => {
  it('tells public unicast addresses from loopback, private, link-local and special ones, IPv4 and IPv6', () => {
    for (const ip of [
      '8.8.8.8',
      '1.1.1.1',
      '93.184.216.34',
      '2001:4860:4860::8888',
      '2606:4700::1111',
      '::ffff:8.8.8.8',
    ])
      expect({ ip, public: isPublicAddress(ip) }).toEqual({ ip, public: true });
    for (const ip of [
      '127.0.0.1',
      '127.255.0.9',
      '0.0.0.0',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.0.10',
      '169.254.169.254',
      '100.64.0.1',
      '224.0.0.1',
      '255.255.255.255',
      '::',
      '::1',
      '[::1]',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:10.0.0.1',
      '::ffff:169.254.169.254',
      '::127.0.0.1',
      '64:ff9b::a9fe:a9fe',
      '2002:7f00:1::',
      '2001::1',
      'fc00::1',
      'fd12:3456::1',
      'fe80::1',
      'fe80::1%eth0',
      'ff02::1',
      '2001:db8::1',
      'localhost',
      'not an address',
    ])
      expect({ ip, public: isPublicAddress(ip) }).toEqual({ ip, public: false });
  });

  it('fails a lookup of a name that resolves to loopback', async () => {
    const err = await new Promise<unknown>((resolve) =>
      publicOnlyLookup('localhost', { all: true }, (e) => resolve(e)),
    );
    expect(err).toMatchObject({ code: 'ENOTPUBLIC' });
  });
});
