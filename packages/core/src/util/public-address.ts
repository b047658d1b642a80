import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/** Every range that is not a public unicast address (IANA special-purpose registries): a URL a
 *  stranger's data names must not reach the host's own machine, its network or its cloud's
 *  metadata service through them. IPv4-mapped IPv6 (`::ffff:127.0.0.1`) is checked as the
 *  IPv4 address it maps (BlockList does so), and the IPv6 forms that embed an IPv4 address
 *  another way (IPv4-compatible, NAT64, 6to4, Teredo) are refused whole. */
const NOT_PUBLIC: ReadonlyArray<readonly [string, number, 'ipv4' | 'ipv6']> = [
  ['0.0.0.0', 8, 'ipv4'], // "this network"
  ['10.0.0.0', 8, 'ipv4'], // private
  ['100.64.0.0', 10, 'ipv4'], // carrier-grade NAT
  ['127.0.0.0', 8, 'ipv4'], // loopback
  ['169.254.0.0', 16, 'ipv4'], // link-local (cloud metadata)
  ['172.16.0.0', 12, 'ipv4'], // private
  ['192.0.0.0', 24, 'ipv4'], // IETF protocol assignments
  ['192.0.2.0', 24, 'ipv4'], // documentation
  ['192.88.99.0', 24, 'ipv4'], // 6to4 relay anycast
  ['192.168.0.0', 16, 'ipv4'], // private
  ['198.18.0.0', 15, 'ipv4'], // benchmarking
  ['198.51.100.0', 24, 'ipv4'], // documentation
  ['203.0.113.0', 24, 'ipv4'], // documentation
  ['224.0.0.0', 4, 'ipv4'], // multicast
  ['240.0.0.0', 4, 'ipv4'], // reserved, broadcast
  ['::', 96, 'ipv6'], // unspecified, loopback, IPv4-compatible
  ['64:ff9b::', 96, 'ipv6'], // NAT64
  ['64:ff9b:1::', 48, 'ipv6'], // local NAT64
  ['100::', 64, 'ipv6'], // discard
  ['2001::', 23, 'ipv6'], // IETF protocol assignments (Teredo among them)
  ['2001:db8::', 32, 'ipv6'], // documentation
  ['2002::', 16, 'ipv6'], // 6to4
  ['fc00::', 7, 'ipv6'], // unique local
  ['fe80::', 10, 'ipv6'], // link-local
  ['fec0::', 10, 'ipv6'], // site-local (deprecated)
  ['ff00::', 8, 'ipv6'], // multicast
];

const blocked = new BlockList();
for (const [net, prefix, type] of NOT_PUBLIC) blocked.addSubnet(net, prefix, type);
// IPv4-mapped addresses are matched against the IPv4 rules above; the mapped range itself
// holds nothing else.

/** True for a public unicast IP address; false for anything else, a non-address included. */
export function isPublicAddress(ip: string): boolean {
  const bare = ip.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  if (family === 0) return false;
  // A zone id names an interface of this host: never a public target.
  if (bare.includes('%')) return false;
  return !blocked.check(bare, family === 4 ? 'ipv4' : 'ipv6');
}

/** The error of a name or literal that leads to a non-public address. */
export class NonPublicAddressError extends Error {
  readonly code = 'ENOTPUBLIC';
  constructor() {
    super('not a public address');
    this.name = 'NonPublicAddressError';
  }
}

/** A `lookup` for `net`/`https` that resolves like `dns.lookup` and fails unless every address
 *  the name resolves to is public. The connection then goes to an address checked here, so a
 *  name that answers a public address to a first lookup and a private one to the next (DNS
 *  rebinding) cannot slip between check and connect. */
export const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, '', 0);
    if (addresses.length === 0 || !addresses.every((a) => isPublicAddress(a.address))) {
      return callback(new NonPublicAddressError(), '', 0);
    }
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    const first = addresses[0]!;
    callback(null, first.address, first.family);
  });
};
