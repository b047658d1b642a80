// The MFA area's option types: a leaf that the shared options import.
import type { MfaMethod } from '../ports/mfa-method.js';

/** A 32-byte AES-256-GCM key that seals TOTP seeds: raw bytes, or base64/base64url text. */
export type SealingKeyInput = Uint8Array | string | { kid: string; key: Uint8Array | string };

/** Options of the MFA area (`createPostern({ mfa: { ... } })`). */
export interface MfaOptions {
  /** Methods users may enrol and use. Default: all three. Email is the weakest (docs/mfa.md). */
  methods?: MfaMethod[];
  /** Every login needs a second factor: a user without one gets a pending token that can only
   *  enrol a first method (`/auth/mfa/enrol/*`), never an access token. Default false. */
  required?: boolean;
  /** Seals TOTP seeds at rest. The first key seals; every key opens (rotation by `kid`).
   *  Absent: an ephemeral key and a warning (seeds then die with the process). */
  encryptionKey?: SealingKeyInput | SealingKeyInput[];
  /** Issuer shown by authenticator apps. Default: the host name of `issuer`. */
  totpIssuer?: string;
  /** Lifetime of a pending login token, seconds. Default 300. */
  pendingTtlSeconds?: number;
  /** Wrong codes that kill a pending login. Default 5. */
  maxFailures?: number;
  /** Lifetime of an emailed code, seconds. Default 600. */
  emailCodeTtlSeconds?: number;
  /** Email sends: one per this many seconds. Default 30. */
  resendCooldownSeconds?: number;
  /** Email sends per pending login (the one at login included). Default 5. */
  maxSends?: number;
  /** End the user's other sessions when a factor is added or removed, or recovery codes are
   *  regenerated. Default true. */
  endSessionsOnChange?: boolean;
  /** For this long after a password change, an emailed code cannot complete a login of a user
   *  who has another factor (a mailbox thief who reset the password must not pass MFA with
   *  the same mailbox). Seconds; default 86400; 0 switches it off. */
  emailLockAfterPasswordChangeSeconds?: number;
}

/** WebAuthn relying party; each field has its own default. */
export interface WebAuthnOptions {
  /** Default: the host name of `issuer`. */
  rpId?: string;
  /** Default: `mfa.totpIssuer`, else the host name of `issuer`. */
  rpName?: string;
  /** Allowed browser origin(s), e.g. `https://app.example`. Default: the origin of `issuer`. */
  origin?: string | string[];
}
