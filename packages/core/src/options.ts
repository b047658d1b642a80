import type { Clock } from './ports/clock.js';
import type { Logger } from './ports/logger.js';
import type { Mailer } from './ports/mailer.js';
import type { SettingsInput } from './ports/settings.js';
import type { Stores } from './ports/stores.js';
import type { KeyInput } from './tokens/keyring.js';

export interface PosternOptions {
  /** `iss` of every token, e.g. `https://app.example`. */
  issuer: string;
  /** `aud` of access tokens. */
  audience: string;
  /** Signing keys: the first signs, all verify. Absent: an ephemeral dev key and a warning. */
  keys?: KeyInput | KeyInput[];
  /** Storage ports. Default: `memoryStores()`. */
  stores?: Stores;
  /** Default: none; each mail is dropped with a `mail_dropped` warning (never its content). */
  mailer?: Mailer;
  /** Holds `inbox.mail.webhook-secret`; read per request. */
  settings?: SettingsInput;
  clock?: Clock;
  /** pino-compatible. Absent: warnings and errors go to stderr as JSON lines, nothing else
   *  (`silentLogger` turns even those off). */
  logger?: Logger;
  /** Mount points. */
  basePath?: { auth?: string; inbox?: string; webhook?: string };
  /** Route-level switches (configuration, not code): a switched-off route answers 404. */
  routes?: { signup?: boolean; emailVerification?: boolean; emailChange?: boolean };
  /** Max body bytes: auth/inbox routes 100 KiB, webhook routes 10 MiB. */
  bodyLimits?: { auth?: number; webhook?: number };
  /** Reverse proxies whose `x-forwarded-for` is believed: addresses (`10.0.0.5`, `::1`) or
   *  CIDR ranges (`10.0.0.0/8`, `fd00::/8`); anything else is a `ConfigError`. Default: none. */
  trustedProxies?: string[];

  // --- auth area options --- (defaults and reasons: docs/auth.md)
  /** Access-token lifetime, seconds. Default 900 (15 min); at most one day. */
  accessTokenTtlSeconds?: number;
  /** Absolute refresh-token (session) lifetime from login, seconds. Default 30 days. */
  refreshTokenTtlSeconds?: number;
  /** A session unused for this long ends, seconds. Default 7 days. */
  refreshIdleSeconds?: number;
  /** A repeat of a just-rotated refresh token within this window gets a new pair in the same
   *  family instead of revoking it (two tabs refreshing at once). Default 0 (strict). */
  refreshReuseGraceSeconds?: number;
  /** Browser sessions: a login with `refreshToken: 'cookie'` gets its refresh token in an
   *  HttpOnly cookie, which refresh and logout read from pages of the trusted origins (see
   *  docs/browser.md). Off unless set. */
  cookieSessions?: import('./http/refresh-cookie.js').CookieSessionOptions;
  /** Live sessions per user; beyond it the oldest end. Default 50. */
  maxSessionsPerUser?: number;
  /** Roles of a new account. Default `['user']`. */
  defaultRoles?: string[];
  /** Strength policy for signup, reset and change (zxcvbn-ts score, breached-password check). */
  passwordPolicy?: import('./auth/options.js').PasswordPolicyOptions;
  /** Argon2id parameters (OWASP defaults) and how many hashes run at once. */
  passwordHashing?: import('./auth/options.js').PasswordHashingOptions;
  /** Limits per throttle bucket; defaults are in docs/auth.md (Throttling). */
  throttle?: import('./auth/options.js').ThrottleOptions;

  // --- MFA area options ---
  /** MFA: methods, TOTP seed sealing key, limits (see docs/mfa.md). */
  mfa?: import('./mfa/options.js').MfaOptions;
  /** WebAuthn relying party (passkeys). */
  webauthn?: import('./mfa/options.js').WebAuthnOptions;

  // --- inbox area options ---
  /** Webhook intake: signature header prefixes, timestamp tolerance (see docs/webhooks.md). */
  webhook?: import('./webhook/types.js').WebhookOptions;
  /** Outbox dispatcher: attempts, backoff, workers (see docs/webhooks.md). */
  outbox?: import('./outbox/types.js').OutboxOptions;
  /** Mail-provider API (Resend-compatible): a port, or `{ apiUrl, token }`. Without a token there
   *  is no provider fetch and replies go out through `mailer` (see docs/inbox.md). */
  provider?:
    | import('./ports/mail-provider.js').MailProvider
    | import('./inbox/provider-client.js').ProviderConfig;
  /** Attachment bytes. Default: in memory; `directoryFiles(dir)` keeps them on disk. */
  files?: import('./ports/file-store.js').FileStore;
  /** Tells owners/members about new mail. Default: a mail through `mailer`. */
  notifier?: import('./ports/notifier.js').Notifier;
  /** Inbox: threading window, attachment size cap, who may create accounts (see docs/inbox.md). */
  inbox?: import('./inbox/options.js').InboxOptions;
}

const KNOWN: Record<keyof PosternOptions, true> = {
  issuer: true,
  audience: true,
  keys: true,
  stores: true,
  mailer: true,
  settings: true,
  clock: true,
  logger: true,
  basePath: true,
  routes: true,
  bodyLimits: true,
  trustedProxies: true,
  accessTokenTtlSeconds: true,
  refreshTokenTtlSeconds: true,
  refreshIdleSeconds: true,
  refreshReuseGraceSeconds: true,
  cookieSessions: true,
  maxSessionsPerUser: true,
  defaultRoles: true,
  passwordPolicy: true,
  passwordHashing: true,
  throttle: true,
  mfa: true,
  webauthn: true,
  webhook: true,
  outbox: true,
  provider: true,
  files: true,
  notifier: true,
  inbox: true,
};

type Keys<T> = Record<keyof NonNullable<T>, true>;

/** The keys of each option group, kept complete by the types (`Keys`), for the same check. */
const GROUPS: { [G in keyof PosternOptions]?: Record<string, true> } = {
  basePath: { auth: true, inbox: true, webhook: true } satisfies Keys<PosternOptions['basePath']>,
  routes: { signup: true, emailVerification: true, emailChange: true } satisfies Keys<
    PosternOptions['routes']
  >,
  bodyLimits: { auth: true, webhook: true } satisfies Keys<PosternOptions['bodyLimits']>,
  cookieSessions: {
    trustedOrigins: true,
    name: true,
    sameSite: true,
    domain: true,
    reuseWindowSeconds: true,
  } satisfies Keys<PosternOptions['cookieSessions']>,
  passwordPolicy: { minScore: true, isBreached: true } satisfies Keys<PosternOptions['passwordPolicy']>,
  passwordHashing: {
    memoryCost: true,
    timeCost: true,
    parallelism: true,
    concurrency: true,
    maxQueue: true,
  } satisfies Keys<PosternOptions['passwordHashing']>,
  // throttle: its buckets are checked where the limits are resolved (auth/options.ts).
  mfa: {
    methods: true,
    required: true,
    encryptionKey: true,
    totpIssuer: true,
    pendingTtlSeconds: true,
    maxFailures: true,
    emailCodeTtlSeconds: true,
    resendCooldownSeconds: true,
    maxSends: true,
    endSessionsOnChange: true,
    emailLockAfterPasswordChangeSeconds: true,
  } satisfies Keys<PosternOptions['mfa']>,
  webauthn: { rpId: true, rpName: true, origin: true } satisfies Keys<PosternOptions['webauthn']>,
  webhook: { toleranceSeconds: true, headerPrefixes: true } satisfies Keys<PosternOptions['webhook']>,
  outbox: {
    maxAttempts: true,
    baseDelayMs: true,
    maxDelayMs: true,
    pollIntervalMs: true,
    concurrency: true,
    visibilityTimeoutMs: true,
    retentionMs: true,
  } satisfies Keys<PosternOptions['outbox']>,
  inbox: {
    threadingWindowDays: true,
    maxAttachmentBytes: true,
    pageSize: true,
    canCreateAccount: true,
    notificationLeaseMs: true,
    attachmentBudgetMs: true,
  } satisfies Keys<PosternOptions['inbox']>,
};

/** Keys that are not options, top level and in the option groups, as dotted paths (the type
 *  checks TypeScript callers; this checks the rest): a misspelt `store:` would otherwise keep
 *  every user in memory, a misspelt `mfa.encryptonKey` seal TOTP seeds with a throwaway key. */
export function unknownOptions(options: object): string[] {
  const unknown: string[] = [];
  for (const [key, value] of Object.entries(options)) {
    if (!Object.hasOwn(KNOWN, key)) unknown.push(key);
    const group = GROUPS[key as keyof PosternOptions];
    if (group && typeof value === 'object' && value !== null)
      for (const k of Object.keys(value)) if (!Object.hasOwn(group, k)) unknown.push(`${key}.${k}`);
  }
  return unknown;
}
