import { PosternError } from '../errors.js';
import { firstValue } from './header.js';
import type { HeaderValue } from './types.js';

/** The log reason of a request that sent no `Authorization` header at all. */
export const NO_TOKEN = 'no_token';

/** The access token of an `Authorization: Bearer <token>` header (RFC 6750 b64token syntax,
 *  at most 4 KiB); 401 `invalid_token` for anything else, a missing header included. */
export function bearerToken(authorization: HeaderValue): string {
  const h = firstValue(authorization);
  if (h === undefined) throw new PosternError('invalid_token', { reason: NO_TOKEN });
  const m = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i.exec(h);
  if (!m || m[1]!.length > 4096) throw new PosternError('invalid_token', { reason: 'malformed_header' });
  return m[1]!;
}

/** `WWW-Authenticate` of a Bearer route's 401 (RFC 6750 3.1): the scheme alone when no token
 *  was sent, the error named when one was. The OpenAPI document lists these two. */
export const BEARER_CHALLENGES = { none: 'Bearer', invalid: 'Bearer error="invalid_token"' } as const;
