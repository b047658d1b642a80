import { readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Folder of the demo page (index.html, app.js, api.js, mfa.js, inbox.js, style.css, vendor/). */
export const publicDir = fileURLToPath(new URL('../public/', import.meta.url));

const types: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.map': 'application/json; charset=utf-8',
};

/** Strict CSP: scripts and styles from this origin only, no inline code, no framing.
 *  Mail HTML is shown only in sandboxed srcdoc iframes, which inherit this policy. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

const headers = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cache-control': 'no-cache',
};

/** Segments of letters, digits and dashes, dots only inside the last one: no `..`, no dotfiles. */
const SAFE_PATH = /^\/(?:[A-Za-z0-9_-]+\/)*[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/;

export interface StaticResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** The demo page as a neutral handler both apps mount: a file of `public/`, or `null`. */
export async function servePublic(method: string, url: string): Promise<StaticResponse | null> {
  if (method !== 'GET' && method !== 'HEAD') return null;
  const q = url.indexOf('?');
  const path = (q === -1 ? url : url.slice(0, q)).replace(/^\/$/, '/index.html');
  const type = types[extname(path)];
  if (!type || !SAFE_PATH.test(path)) return null;
  try {
    const body = await readFile(join(publicDir, path));
    return { status: 200, headers: { ...headers, 'content-type': type }, body };
  } catch {
    return null;
  }
}
