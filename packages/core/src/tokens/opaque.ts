import { createHash, createHmac, randomBytes } from 'node:crypto';

/** 256 random bits, base64url: refresh tokens and reset codes. */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The refresh token a cookie session rotates `token` into: HMAC-SHA-256 keyed with the token
 *  over a random `salt` (256 bits, base64url) that the store keeps with the successor. A repeat
 *  of the just-rotated token within the reuse window derives the same successor again, so tabs
 *  refreshing at once share one newest token without the store ever holding a token itself;
 *  whoever holds an old token but not the salt cannot compute it. */
export function successorToken(token: string, salt: string): string {
  return createHmac('sha256', token).update(salt, 'utf8').digest('base64url');
}

/** base64url SHA-256: how opaque tokens are stored and looked up (never the token itself). */
export function sha256(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('base64url');
}
