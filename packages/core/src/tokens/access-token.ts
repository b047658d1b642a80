import { randomUUID } from 'node:crypto';
import { PosternError } from '../errors.js';
import type { Keyring } from './keyring.js';
import type { Principal } from './principal.js';

/** RFC 9068 header type of access tokens; pending MFA tokens use another, so neither is
 *  accepted in place of the other. */
export const ACCESS_TOKEN_TYP = 'at+jwt';

const REQUIRED = ['sub', 'exp', 'iat', 'jti', 'sid'];

export interface AccessTokenSubject {
  userId: string;
  sid: string;
  /** Unix seconds of the login that started the session. */
  authTime: number;
  amr: string[];
}

export function signAccessToken(
  keyring: Keyring,
  opts: { audience: string; ttlSeconds: number },
  s: AccessTokenSubject,
): Promise<string> {
  return keyring.sign(
    { aud: opts.audience, sub: s.userId, sid: s.sid, jti: randomUUID(), auth_time: s.authTime, amr: s.amr },
    ACCESS_TOKEN_TYP,
    opts.ttlSeconds,
  );
}

/** Verifies signature (the one pinned algorithm, a configured `kid`), `typ`, `iss`, `aud`,
 *  expiry and the required claims; throws 401 `invalid_token`. Revocation is checked by the caller. */
export async function verifyAccessToken(
  keyring: Keyring,
  audience: string,
  token: string,
): Promise<Principal> {
  const p = await keyring.verify(token, { typ: ACCESS_TOKEN_TYP, audience, requiredClaims: REQUIRED });
  const { sub, sid, jti, exp, auth_time: authTime, amr } = p as Record<string, unknown>;
  if (
    typeof sub !== 'string' ||
    typeof sid !== 'string' ||
    typeof jti !== 'string' ||
    typeof exp !== 'number'
  )
    throw new PosternError('invalid_token', { reason: 'bad_claim' });
  return {
    userId: sub,
    sid,
    jti,
    exp,
    // A token without auth_time is never "fresh"; amr defaults to nothing.
    authTime: typeof authTime === 'number' ? authTime : 0,
    amr: Array.isArray(amr) ? amr.filter((m): m is string => typeof m === 'string') : [],
  };
}
