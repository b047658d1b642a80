import { ConfigError, PosternError } from '../errors.js';
import { LONGEST_REUSE_WINDOW_SECONDS } from '../ports/session-store.js';
import { integerOption } from '../util/integer-option.js';
import { firstValue } from './header.js';
import type { HeaderValue } from './types.js';

/** Marks a cookie session's answer: the HTTP layer moves its `refreshToken` into the cookie,
 *  for `maxAgeSeconds` (what is left of the session), and leaves it out of the JSON. A symbol
 *  key: never serialized, and kept by the spread of an answer that adds fields to it (the
 *  recovery codes of a login that enrolled its first factor). */
const REFRESH_COOKIE = Symbol('postern.refreshCookie');

export function markCookieSession<T extends object>(answer: T, maxAgeSeconds: number): T {
  return Object.assign(answer, { [REFRESH_COOKIE]: maxAgeSeconds });
}

/** The cookie lifetime of a marked answer (`markCookieSession`), or undefined. */
export function cookieSessionMark(body: unknown): number | undefined {
  return typeof body === 'object' && body !== null
    ? (body as { [REFRESH_COOKIE]?: number })[REFRESH_COOKIE]
    : undefined;
}

/** Browser sessions: the refresh token in an HttpOnly cookie (docs/browser.md). */
export interface CookieSessionOptions {
  /** Origins (`https://app.example`, `http://localhost:3000`) whose pages may refresh and log
   *  out with the cookie. At least one. */
  trustedOrigins: string[];
  /** Cookie name. Default `postern_refresh`; `__Secure-` goes in front of it where every
   *  trusted origin is https (else a warning at start). A name of your own that starts with
   *  `__Secure-` needs every trusted origin to be https (`ConfigError`). */
  name?: string;
  /** Default `Strict`. `Lax` keeps the cookie on top-level navigations from other sites. */
  sameSite?: 'Strict' | 'Lax';
  /** `Domain` attribute (shares the cookie with subdomains). Default: none (host only). */
  domain?: string;
  /** A repeat of a cookie session's just-rotated refresh token within this many seconds gets
   *  the family's newest token again instead of ending the session (tabs refreshing at once).
   *  Default 10; 0 = strict; at most 60. */
  reuseWindowSeconds?: number;
}

/** The resolved cookie settings. */
export interface CookieSessions {
  name: string;
  sameSite: 'Strict' | 'Lax';
  domain?: string;
  reuseWindowSeconds: number;
  trustedOrigins: ReadonlySet<string>;
  /** A plain-http trusted origin, not on this machine, that left the default name without its
   *  `__Secure-` prefix (a warning at start); absent otherwise. */
  plainOrigin?: string;
}

const DEFAULT_NAME = 'postern_refresh';
/** RFC 6265 cookie-name: a token (no separators, no controls). */
const COOKIE_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A domain attribute: labels and dots only (no separators that would end the attribute). */
const DOMAIN = /^\.?[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$/;
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
/** Host names of this machine: `localhost` (and its subdomains), 127.0.0.0/8, `[::1]`. */
const LOOPBACK = /^(?:(?:[a-z0-9-]+\.)*localhost|127(?:\.\d{1,3}){3}|\[::1\])$/;

/** The serialized origin a browser sends in `Origin` for `value`, or a `ConfigError`. */
function origin(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`cookieSessions.trustedOrigins: ${JSON.stringify(value)} is not an origin`);
  }
  // Compared as browsers serialize it: lower case, default port left out.
  const o = url.origin;
  const bare = url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password;
  if (o === 'null' || (url.protocol !== 'https:' && url.protocol !== 'http:') || !bare)
    throw new ConfigError(
      `cookieSessions.trustedOrigins: ${JSON.stringify(value)} is not an origin (scheme://host[:port], no path)`,
    );
  return o;
}

export function resolveCookieSessions(o: CookieSessionOptions | undefined): CookieSessions | null {
  if (o === undefined) return null;
  const origins = (o.trustedOrigins ?? []).map(origin);
  if (origins.length === 0) throw new ConfigError('cookieSessions.trustedOrigins needs at least one origin');
  const base = o.name ?? DEFAULT_NAME;
  if (!COOKIE_NAME.test(base)) throw new ConfigError('cookieSessions.name is not a valid cookie name');
  if (o.sameSite !== undefined && o.sameSite !== 'Strict' && o.sameSite !== 'Lax')
    throw new ConfigError("cookieSessions.sameSite must be 'Strict' or 'Lax'");
  if (o.domain !== undefined && !DOMAIN.test(o.domain))
    throw new ConfigError('cookieSessions.domain is not a domain name');
  // The prefix makes browsers refuse the cookie unless it is Secure and set over https, so a
  // plain-http sibling cannot plant one under this name; an http origin (development on
  // localhost) could not set it at all.
  const plain = origins.find((x) => x.startsWith('http:'));
  if (plain !== undefined && base.startsWith('__Secure-'))
    throw new ConfigError(
      `cookieSessions.name ${base} needs every trusted origin to be https: browsers refuse a __Secure- cookie set over http (${plain})`,
    );
  // Said at start (a warning) unless the http origin is this machine: development, with no
  // sibling host to plant a cookie.
  const told = origins.find((x) => x.startsWith('http:') && !LOOPBACK.test(new URL(x).hostname));
  return {
    name: plain === undefined && !base.startsWith('__Secure-') ? `__Secure-${base}` : base,
    sameSite: o.sameSite ?? 'Strict',
    domain: o.domain,
    reuseWindowSeconds: integerOption(
      'cookieSessions.reuseWindowSeconds',
      o.reuseWindowSeconds,
      10,
      0,
      LONGEST_REUSE_WINDOW_SECONDS,
    ),
    trustedOrigins: new Set(origins),
    ...(told === undefined ? {} : { plainOrigin: told }),
  };
}

/** The value of cookie `name` in the request's `Cookie` header(s); the first one when the
 *  browser sends several (the one with the longest path comes first). */
export function readCookie(header: HeaderValue, name: string): string | undefined {
  const values = Array.isArray(header) ? header : header === undefined ? [] : [header];
  for (const line of values)
    for (const pair of line.split(';')) {
      const eq = pair.indexOf('=');
      if (eq === -1 || pair.slice(0, eq).trim() !== name) continue;
      const v = pair.slice(eq + 1).trim();
      const value = v.length >= 2 && v.startsWith('"') && v.endsWith('"') ? v.slice(1, -1) : v;
      if (value !== '') return value;
    }
  return undefined;
}

/** A request authenticated by the cookie (which a browser attaches on its own) must come from
 *  a trusted page: an `Origin` among the trusted ones or, where a browser sends none,
 *  `Sec-Fetch-Site: same-origin`; and as JSON, which a plain HTML form cannot send. Else 403
 *  `csrf_refused`. */
export function assertTrustedRequest(c: CookieSessions, headers: Record<string, HeaderValue>): void {
  const type = firstValue(headers['content-type']);
  if (type === undefined || !JSON_TYPE.test(type))
    throw new PosternError('csrf_refused', {
      detail: 'A cookie-authenticated request must be JSON',
      reason: 'not_json',
    });
  const from = firstValue(headers.origin);
  const trusted =
    from === undefined ? firstValue(headers['sec-fetch-site']) === 'same-origin' : c.trustedOrigins.has(from);
  if (!trusted)
    throw new PosternError('csrf_refused', {
      detail: 'The request does not come from a trusted origin',
      reason: from === undefined ? 'no_origin' : 'untrusted_origin',
    });
}

/** Where the cookie applies: the auth mount point under the host's own prefix. */
export const cookiePath = (hostBase: string, authBase: string) =>
  `${hostBase.replace(/\/$/, '')}${authBase === '/' ? '' : authBase}` || '/';

function attributes(c: CookieSessions, path: string): string {
  return `; Path=${path}${c.domain ? `; Domain=${c.domain}` : ''}; HttpOnly; Secure; SameSite=${c.sameSite}`;
}

/** `Set-Cookie` carrying a refresh token for `maxAgeSeconds` (what is left of its session). */
export function setCookie(c: CookieSessions, path: string, token: string, maxAgeSeconds: number): string {
  return `${c.name}=${token}; Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}${attributes(c, path)}`;
}

/** `Set-Cookie` that removes the cookie. */
export function clearCookie(c: CookieSessions, path: string): string {
  return `${c.name}=; Max-Age=0${attributes(c, path)}`;
}
