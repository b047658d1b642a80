import { isIP } from 'node:net';
import type { NeutralRequest } from '../http/types.js';

/** Canonical client address for limiter keys: IPv4 as is, IPv6 cut to its /64 so one
 *  host cannot rotate through its own prefix. IPv4-mapped IPv6 becomes IPv4. */
export function limiterAddress(ip: string): string {
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (v4) return v4[1]!;
  if (isIP(ip) !== 6) return ip;
  const [head = '', tail = ''] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = ip.includes('::')
    ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/** The socket address, or the first untrusted hop of `x-forwarded-for` when the socket
 *  is a trusted proxy. Forwarded headers from anyone else are ignored. */
export function clientIp(req: NeutralRequest, trustedProxies: ReadonlySet<string>): string {
  const socket = req.ip ?? '';
  if (trustedProxies.size === 0 || !trustedProxies.has(socket)) return socket;
  const xff = req.headers['x-forwarded-for'];
  const hops = (Array.isArray(xff) ? xff.join(',') : (xff ?? ''))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    if (!trustedProxies.has(hop)) return isIP(hop) ? hop : socket;
  }
  return socket;
}
