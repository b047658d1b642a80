import { ConfigError } from '../errors.js';
import type { PosternOptions } from '../options.js';
import type { MfaMethod } from '../ports/mfa-method.js';
import { integerOption } from '../util/integer-option.js';

export type { MfaOptions, SealingKeyInput, WebAuthnOptions } from './option-types.js';

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
  integerOption(`mfa.${name}`, v, dflt, allowZero ? 0 : 1);

/** The options the MFA area reads (issuer and audience name TOTP entries, passkeys' relying party and pending tokens). */
export type MfaAreaOptions = Pick<PosternOptions, 'issuer' | 'audience' | 'mfa' | 'webauthn'>;

export function resolveMfaConfig(options: MfaAreaOptions): MfaConfig {
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
