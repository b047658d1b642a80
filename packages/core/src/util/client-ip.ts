import { BlockList, isIP } from 'node:net';
import { ConfigError } from '../errors.js';

/** The eight 16-bit groups of a valid IPv6 address (an embedded dotted quad and a zone id
 *  allowed). */
function ipv6Groups(ip: string): number[] {
  let s = ip.replace(/%.*$/, '');
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    s = `${s.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail = ''] = s.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const hex = s.includes('::')
    ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return hex.map((g) => Number.parseInt(g, 16));
}

const mappedV4 = (g: number[]) => g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff;
const v4Of = (g: number[]) => [g[6]! >> 8, g[6]! & 255, g[7]! >> 8, g[7]! & 255].join('.');

/** One spelling per host address, to compare with the trusted proxy list: IPv4-mapped IPv6
 *  (what a dual-stack listener reports for IPv4 peers) as IPv4, other IPv6 as its eight groups;
 *  anything else as given. */
export function addressKey(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  const g = ipv6Groups(ip);
  // A zone (`fe80::1%eth0`) names one interface's neighbour: another zone is another host.
  return mappedV4(g) ? v4Of(g) : `${g.map((x) => x.toString(16)).join(':')}${/%.*$/.exec(ip)?.[0] ?? ''}`;
}

/** Canonical client address for limiter keys: IPv4 as is, IPv6 cut to its /64 so one
 *  host cannot rotate through its own prefix. IPv4-mapped IPv6 (`::ffff:a.b.c.d`, in any
 *  spelling) becomes IPv4, so a proxy's choice of notation never splits or merges buckets. */
export function limiterAddress(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  const g = ipv6Groups(ip);
  if (mappedV4(g)) return v4Of(g);
  return `${g
    .slice(0, 4)
    .map((x) => x.toString(16))
    .join(':')}::/64`;
}

/** Whether an address is one of the host's reverse proxies. */
export type ProxyTest = (ip: string) => boolean;

const withoutZone = (ip: string) => ip.replace(/%.*$/, '');

/** The test for `trustedProxies`: exact addresses (any spelling; a zone id names one
 *  interface's neighbour) and CIDR ranges (`10.0.0.0/8`, `fd00::/8`; an IPv4 range also covers
 *  the IPv4-mapped spelling a dual-stack listener reports, and an IPv6 range over
 *  `::ffff:0:0/96`, `::/0` included, covers IPv4 peers). `null` when there are none, so
 *  the common case costs nothing per request. A typo would silently trust nobody (or the wrong
 *  hosts), so an entry that is neither is a `ConfigError`. */
export function proxyTest(entries: readonly string[]): ProxyTest | null {
  if (entries.length === 0) return null;
  const exact = new Set<string>();
  const ranges = new BlockList();
  let anyRange = false;
  for (const entry of entries) {
    const slash = entry.indexOf('/');
    const address = slash === -1 ? entry : entry.slice(0, slash);
    // isIP takes a zone on IPv6 only (`fe80::1%eth0`); a range with one means nothing to
    // BlockList: refused with the rest.
    const family = slash === -1 ? isIP(address) : address.includes('%') ? 0 : isIP(address);
    const bits = slash === -1 ? null : entry.slice(slash + 1);
    if (
      family === 0 ||
      (bits !== null && (!/^\d{1,3}$/.test(bits) || Number(bits) > (family === 4 ? 32 : 128)))
    )
      throw new ConfigError(
        `trustedProxies: ${JSON.stringify(entry)} is neither an IP address nor a CIDR range`,
      );
    if (bits === null) exact.add(addressKey(address));
    else {
      ranges.addSubnet(address, Number(bits), family === 4 ? 'ipv4' : 'ipv6');
      anyRange = true;
    }
  }
  return (ip) => {
    if (exact.has(addressKey(ip))) return true;
    if (!anyRange) return false;
    // A zone id only on IPv6 (a range covers every interface); anything else must be an address.
    const family = isIP(ip);
    if (family === 4) return ranges.check(ip, 'ipv4');
    return family === 6 && ranges.check(withoutZone(ip), 'ipv6');
  };
}

/** The parts of a request its client address is read from (an adapter's neutral request). */
export interface AddressedRequest {
  ip?: string;
  headers: Record<string, string | string[] | undefined>;
}

/** The socket address, or the first untrusted hop of `x-forwarded-for` when the socket
 *  is a trusted proxy. Forwarded headers from anyone else are ignored. */
export function clientIp(req: AddressedRequest, trusted: ProxyTest | null): string {
  const socket = req.ip ?? '';
  if (trusted === null || !trusted(socket)) return socket;
  const xff = req.headers['x-forwarded-for'];
  const hops = (Array.isArray(xff) ? xff.join(',') : (xff ?? ''))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    if (!trusted(hop)) return isIP(hop) ? hop : socket;
  }
  return socket;
}
