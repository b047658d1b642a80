import type { MfaMethod } from './mfa-method.js';

/** AES-256-GCM sealed bytes (a TOTP seed at rest). */
export interface SealedSecret {
  /** Id of the key that sealed it (so keys can rotate). */
  kid: string;
  /** base64url of the 96-bit IV. */
  iv: string;
  /** base64url of ciphertext followed by the 128-bit tag. */
  data: string;
}

/** A confirmed (active) TOTP or email factor of a user. WebAuthn is a factor as soon as the
 *  user has a credential (see WebAuthnCredentialStore). */
export interface MfaFactor {
  userId: string;
  type: 'totp' | 'email';
  enabledAt: Date;
  /** TOTP only: the sealed seed. */
  secret?: SealedSecret;
  /** TOTP only: the last accepted RFC 6238 time step (-1 = none yet). */
  lastStep?: number;
}

/** A TOTP seed handed out by setup, waiting for its first code. */
export interface PendingTotp {
  userId: string;
  secret: SealedSecret;
  expiresAt: Date;
}

/** Confirmed TOTP and email factors, and TOTP seeds awaiting confirmation. */
export interface MfaFactorStore {
  /** Active factors of the user (TOTP, email), any order. */
  listFactors(userId: string): Promise<MfaFactor[]>;
  /** The second steps the user has, in one read (a login's and `/auth/me`'s question; on
   *  Postgres one statement): the type of each active factor, and `'webauthn'` when the user
   *  holds a WebAuthn credential (WebAuthnCredentialStore). Any order, no repeats. */
  listMethods(userId: string): Promise<MfaMethod[]>;
  getFactor(userId: string, type: MfaFactor['type']): Promise<MfaFactor | null>;
  /** Adds the factor, replacing an active one of the same type. */
  enableFactor(factor: MfaFactor): Promise<void>;
  /** Removes the factor; true when one was there. */
  removeFactor(userId: string, type: MfaFactor['type']): Promise<boolean>;
  /** Atomic compare-and-set: records `step` as the user's last accepted TOTP step only when it
   *  is greater than the stored one. Concurrent callers with the same step: exactly one gets
   *  `true`. False when there is no active TOTP factor. */
  acceptTotpStep(userId: string, step: number): Promise<boolean>;
  /** Stores a seed from setup, replacing any earlier pending seed of the user (the active
   *  factor, if any, stays until this one is confirmed). */
  savePendingTotp(pending: PendingTotp): Promise<void>;
  /** The pending seed, or null when absent or expired at `now`. */
  getPendingTotp(userId: string, now: Date): Promise<PendingTotp | null>;
  /** Atomically turns the pending seed `secret` (compared by its `data`) into the active TOTP
   *  factor (replacing an older one) with `lastStep = step`, deleting the pending seed.
   *  Concurrent callers: exactly one gets `true`; false when the seed is gone, expired or replaced. */
  confirmPendingTotp(userId: string, secret: SealedSecret, step: number, now: Date): Promise<boolean>;
}
