import type { MfaMethod } from '../context.js';
import { ConfigError } from '../errors.js';
import type { PosternOptions } from '../options.js';
import { wholeOption } from '../util/whole-option.js';

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

export interface MfaConfig {
  methods: ReadonlySet<MfaMethod>;
  required: boolean;
  totpIssuer: string;
  pendingTtlSeconds: number;
  maxFailures: number;
  emailCodeTtlSeconds: number;
  resendCooldownSeconds: number;
  maxSends: number;
  endSessionsOnChange: boolean;
  emailLockAfterPasswordChangeSeconds: number;
  pendingAudience: string;
  webauthn: { rpId: string; rpName: string; origin: string[] };
}

const ALL: MfaMethod[] = ['totp', 'email', 'webauthn'];

const positive = (name: string, v: number | undefined, dflt: number, allowZero = false) =>
  wholeOption(`mfa.${name}`, v, dflt, allowZero ? 0 : 1);

export function resolveMfaConfig(options: PosternOptions): MfaConfig {
  const m = options.mfa ?? {};
  let issuerUrl: URL | null = null;
  try {
    issuerUrl = new URL(options.issuer);
  } catch {
    issuerUrl = null;
  }
  const methods = m.methods ?? ALL;
  for (const x of methods) if (!ALL.includes(x)) throw new ConfigError(`mfa.methods: unknown method ${x}`);
  if (m.required && methods.length === 0) throw new ConfigError('mfa.required needs at least one method');
  const wa = options.webauthn;
  const rpId = wa?.rpId ?? issuerUrl?.hostname;
  const origin = wa?.origin ?? issuerUrl?.origin;
  if (methods.includes('webauthn') && (!rpId || !origin))
    throw new ConfigError(
      `issuer ${JSON.stringify(options.issuer)} is not a URL, so passkeys have no relying party: set webauthn.rpId and webauthn.origin, use a URL issuer (https://app.example), or leave passkeys out (mfa.methods)`,
    );
  return {
    methods: new Set(methods),
    required: m.required === true,
    totpIssuer: m.totpIssuer ?? issuerUrl?.hostname ?? options.issuer,
    pendingTtlSeconds: positive('pendingTtlSeconds', m.pendingTtlSeconds, 300),
    maxFailures: positive('maxFailures', m.maxFailures, 5),
    emailCodeTtlSeconds: positive('emailCodeTtlSeconds', m.emailCodeTtlSeconds, 600),
    resendCooldownSeconds: positive('resendCooldownSeconds', m.resendCooldownSeconds, 30, true),
    maxSends: positive('maxSends', m.maxSends, 5),
    endSessionsOnChange: m.endSessionsOnChange ?? true,
    emailLockAfterPasswordChangeSeconds: positive(
      'emailLockAfterPasswordChangeSeconds',
      m.emailLockAfterPasswordChangeSeconds,
      86_400,
      true,
    ),
    pendingAudience: `${options.audience}:mfa`,
    webauthn: {
      rpId: rpId ?? '',
      rpName: wa?.rpName ?? m.totpIssuer ?? issuerUrl?.hostname ?? 'Postern',
      origin: [origin ?? ''].flat(),
    },
  };
}
