import type { IncomingMessage } from 'node:http';
import { request } from 'node:https';
import { isIP } from 'node:net';
import { Readable } from 'node:stream';
import { isPublicAddress, NonPublicAddressError, publicOnlyLookup } from '../util/public-address.js';

/** A GET over https to a URL from a stranger's data (a `download_url`) that reaches public
 *  addresses only: an IP literal is checked before connecting, a name at the lookup the socket
 *  connects with (`publicOnlyLookup`), so the address checked is the address connected to.
 *  TLS is verified against the URL's host name as usual. Redirects are not followed; the
 *  answer comes back as a `Response` (body not read yet). Rejects with `NonPublicAddressError`
 *  for a private, loopback, link-local or otherwise special address. */
export function publicHttpsGet(
  url: URL,
  init: { headers: Record<string, string>; signal: AbortSignal },
): Promise<Response> {
  if (url.protocol !== 'https:') return Promise.reject(new Error('https only'));
  const host = url.hostname;
  // An IP literal is connected to without a lookup: checked here.
  if (isIP(host.replace(/^\[|\]$/g, '')) !== 0 && !isPublicAddress(host)) {
    return Promise.reject(new NonPublicAddressError());
  }
  return new Promise<Response>((resolve, reject) => {
    const req = request(url, {
      method: 'GET',
      headers: init.headers,
      signal: init.signal,
      lookup: publicOnlyLookup,
      // One socket per download: never one pooled under a name checked for another request.
      agent: false,
    });
    req.once('error', reject);
    req.once('response', (res: IncomingMessage) => {
      try {
        resolve(responseOf(res));
      } catch (e) {
        res.destroy();
        reject(e);
      }
    });
    req.end();
  });
}

/** A node:http answer as a fetch `Response` (body streamed, not read yet), so it is read, capped
 *  and checked by the same code as the API's answers. Throws for a status `Response` refuses. */
export function responseOf(res: IncomingMessage): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  const status = res.statusCode ?? 0;
  const empty = status === 204 || status === 304;
  const response = new Response(empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), {
    status,
    headers,
  });
  if (empty) res.resume();
  return response;
}
