import type { ThrottleBucket } from '../context.js';
import { ConfigError } from '../errors.js';
import { type CookieSessions, resolveCookieSessions } from '../http/refresh-cookie.js';
import type { PosternOptions } from '../options.js';
import { wholeOption } from '../util/whole-option.js';

/** One limiter bucket: at most `points` events per fixed window of `durationSeconds`. */
export interface ThrottleLimit {
  points: number;
  durationSeconds: number;
}

export type ThrottleOptions = Partial<Record<ThrottleBucket, ThrottleLimit>>;

export interface PasswordPolicyOptions {
  /** Lowest accepted zxcvbn-ts score (0-4). Default 3. */
  minScore?: 0 | 1 | 2 | 3 | 4;
  /** Optional breached-password check (e.g. a k-anonymity API client). Off unless supplied;
   *  a `true` answer rejects the password with 400 `validation_failed`. */
  isBreached?: (password: string) => Promise<boolean>;
}

export interface PasswordHashingOptions {
  /** Argon2id memory in KiB. Default 19456 (OWASP). */
  memoryCost?: number;
  /** Argon2id passes. Default 2. */
  timeCost?: number;
  /** Argon2id lanes. Default 1. */
  parallelism?: number;
  /** Hashes computed at once; the rest wait in a queue. Default 4. */
  concurrency?: number;
  /** Waiting hashes beyond this are refused with 503 `unavailable`. Default 1000. */
  maxQueue?: number;
}

/** Every auth number resolved, defaults applied (docs/auth.md lists them). */
export interface AuthConfig {
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  refreshIdleSeconds: number;
  refreshReuseGraceSeconds: number;
  /** Browser sessions (refresh token in a cookie); null when off. */
  cookieSessions: CookieSessions | null;
  maxSessionsPerUser: number;
  defaultRoles: string[];
  minScore: number;
  isBreached?: (password: string) => Promise<boolean>;
  hashing: Required<PasswordHashingOptions>;
  throttle: Record<ThrottleBucket, ThrottleLimit>;
  signup: boolean;
  emailVerification: boolean;
  emailChange: boolean;
  /** Access verification and password context words. */
  issuer: string;
  audience: string;
}

const MIN = 60;
const DAY = 86400;

export const defaultThrottle: Record<ThrottleBucket, ThrottleLimit> = {
  'login:email': { points: 10, durationSeconds: 15 * MIN },
  'login:ip': { points: 100, durationSeconds: 15 * MIN },
  'code:user': { points: 10, durationSeconds: 15 * MIN },
  'code:ip': { points: 100, durationSeconds: 15 * MIN },
  'forgot:email': { points: 3, durationSeconds: 15 * MIN },
  // Per address too: one client cannot mail every registered user, nor fill the limiter with
  // counters of invented addresses (the first bucket hit; over it, no email counter is made).
  'forgot:ip': { points: 100, durationSeconds: 15 * MIN },
  resend: { points: 1, durationSeconds: 30 },
  'mail:user': { points: 10, durationSeconds: 60 * MIN },
  'confirm:user': { points: 10, durationSeconds: DAY },
  'signup:ip': { points: 100, durationSeconds: 60 * MIN },
  'webauthn:ip': { points: 100, durationSeconds: 15 * MIN },
  // Inbox members added by an email without a user (a 404 tells registered emails apart): per
  // caller, and per address no more than signup's 409 already tells (100 per hour).
  'member:user': { points: 20, durationSeconds: 60 * MIN },
  'member:ip': { points: 100, durationSeconds: 60 * MIN },
  // Inbox accounts created and replies sent, per user: each creates rows for good, and a reply
  // sends mail from the host's domain. A person claims a few addresses a day and answers a few
  // threads a minute at most; a script in a stolen session does neither for long.
  'inbox-account:user': { points: 10, durationSeconds: DAY },
  'reply:user': { points: 30, durationSeconds: 15 * MIN },
  // Refresh rotations per session (counted by the session store, not the limiter): every
  // rotation keeps a token row for the session's life. A client refreshes about once per
  // access token; page loads and tabs add a few.
  'refresh:session': { points: 100, durationSeconds: 15 * MIN },
};

export function resolveAuthConfig(o: PosternOptions): AuthConfig {
  const throttle = { ...defaultThrottle };
  for (const [bucket, limit] of Object.entries(o.throttle ?? {}) as Array<[ThrottleBucket, ThrottleLimit]>) {
    if (!Object.hasOwn(defaultThrottle, bucket)) throw new ConfigError(`unknown throttle bucket ${bucket}`);
    throttle[bucket] = {
      points: wholeOption(`throttle.${bucket}.points`, limit.points, 1),
      durationSeconds: wholeOption(`throttle.${bucket}.durationSeconds`, limit.durationSeconds, 1),
    };
  }
  const refreshTokenTtlSeconds = wholeOption('refreshTokenTtlSeconds', o.refreshTokenTtlSeconds, 30 * DAY);
  const minScore = o.passwordPolicy?.minScore ?? 3;
  if (![0, 1, 2, 3, 4].includes(minScore)) throw new ConfigError('passwordPolicy.minScore must be 0-4');
  const h = o.passwordHashing ?? {};
  const accessTokenTtlSeconds = wholeOption('accessTokenTtlSeconds', o.accessTokenTtlSeconds, 15 * MIN);
  if (accessTokenTtlSeconds > DAY) throw new ConfigError('accessTokenTtlSeconds must be at most one day');
  return {
    accessTokenTtlSeconds,
    refreshTokenTtlSeconds,
    refreshIdleSeconds: Math.min(
      wholeOption('refreshIdleSeconds', o.refreshIdleSeconds, 7 * DAY),
      refreshTokenTtlSeconds,
    ),
    refreshReuseGraceSeconds: wholeOption('refreshReuseGraceSeconds', o.refreshReuseGraceSeconds, 0, 0),
    cookieSessions: resolveCookieSessions(o.cookieSessions),
    maxSessionsPerUser: wholeOption('maxSessionsPerUser', o.maxSessionsPerUser, 50),
    defaultRoles: [...(o.defaultRoles ?? ['user'])],
    minScore,
    isBreached: o.passwordPolicy?.isBreached,
    hashing: {
      memoryCost: wholeOption('passwordHashing.memoryCost', h.memoryCost, 19456, 8),
      timeCost: wholeOption('passwordHashing.timeCost', h.timeCost, 2),
      parallelism: wholeOption('passwordHashing.parallelism', h.parallelism, 1),
      concurrency: wholeOption('passwordHashing.concurrency', h.concurrency, 4),
      maxQueue: wholeOption('passwordHashing.maxQueue', h.maxQueue, 1000, 0),
    },
    throttle,
    signup: o.routes?.signup !== false,
    emailVerification: o.routes?.emailVerification !== false,
    emailChange: o.routes?.emailChange !== false,
    issuer: o.issuer,
    audience: o.audience,
  };
}
