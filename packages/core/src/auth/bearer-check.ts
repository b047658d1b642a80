import { createHash } from 'node:crypto';
import type { PosternContext } from '../context.js';
import { isPosternError, PosternError } from '../errors.js';
import { bearerToken, NO_TOKEN } from '../http/bearer.js';
import type { HeaderValue, Principal } from '../http/types.js';
import { verifyAccessToken } from '../tokens/access-token.js';
import type { EndedSessions } from './ended-sessions.js';
import { logAuthEvent, type RequestMeta } from './log.js';

/** A token's name in a log line: the first 12 hex digits of its SHA-256. Enough to tell one
 *  token's repeats apart and match a token the operator holds; never enough to use it. */
export const tokenFingerprint = (token: string): string =>
  createHash('sha256').update(token).digest('hex').slice(0, 12);

/** Why a token was refused: the reason the verifier gave (expired, bad_signature, wrong_type, ...). */
export const reasonOf = (e: unknown): string => (isPosternError(e) && e.reason) || 'invalid';

/** Bearer verification for every area: signature and claims, then the in-memory ended set (no
 *  store round trip). Every refusal of a presented token is logged at `warn` as
 *  `authorization_denied` with its reason and fingerprint; a request that sent no
 *  `Authorization` header at all presented nothing to refuse and is only answered (401). */
export function createBearerCheck(ctx: PosternContext, audience: string, ended: EndedSessions) {
  /** `token` is absent for a header that holds no Bearer token: it may be another scheme's
   *  credentials (`Basic` carries a password), whose short unsalted hash must not be logged. */
  const denied = (reason: string, token: string | null, meta?: RequestMeta | null, p?: Principal) =>
    logAuthEvent(
      ctx.logger,
      'warn',
      {
        event: 'authorization_denied',
        outcome: 'failure',
        reason,
        userId: p?.userId,
        sid: p?.sid,
        ...(token === null ? {} : { tokenSha256: tokenFingerprint(token) }),
      },
      meta,
    );

  async function token(t: string, meta?: RequestMeta | null): Promise<Principal> {
    let principal: Principal;
    try {
      principal = await verifyAccessToken(ctx.keyring, audience, t);
    } catch (e) {
      denied(reasonOf(e), t, meta);
      throw e;
    }
    if (await ended.has(principal.sid)) {
      denied('session_ended', t, meta, principal);
      throw new PosternError('invalid_token', { reason: 'session_ended' });
    }
    return principal;
  }

  async function header(authorization: HeaderValue, meta?: RequestMeta | null): Promise<Principal> {
    let t: string;
    try {
      t = bearerToken(authorization);
    } catch (e) {
      const reason = reasonOf(e);
      if (reason !== NO_TOKEN) denied(reason, null, meta);
      throw e;
    }
    return token(t, meta);
  }

  return { token, header };
}

export type BearerCheck = ReturnType<typeof createBearerCheck>;
