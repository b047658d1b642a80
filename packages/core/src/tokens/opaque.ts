import { createHash, randomBytes } from 'node:crypto';

/** 256 random bits, base64url: refresh tokens and reset codes. */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

/** base64url SHA-256: how opaque tokens are stored and looked up (never the token itself). */
export function sha256(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('base64url');
}

/** A short, non-reversible tag of a token for logs (docs/auth.md, Logging). */
export function tokenTag(value: string): string {
  return sha256(value).slice(0, 12);
}
