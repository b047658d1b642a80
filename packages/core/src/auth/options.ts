import { ConfigError } from '../errors.js';
import { type CookieSessions, resolveCookieSessions } from '../http/refresh-cookie.js';
import type { PosternOptions } from '../options.js';
import { integerOption } from '../util/integer-option.js';
import type { PasswordHashingOptions, ThrottleBucket, ThrottleLimit } from './option-types.js';

export type {
  PasswordHashingOptions,
  PasswordPolicyOptions,
  ThrottleLimit,
  ThrottleOptions,
} from './option-types.js';

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
  // Failed password checks: low per email and address, so a stranger's guesses from one place
  // never lock the owner out elsewhere; a high ceiling per email alone and per address.
  'login:email+ip': { points: 10, durationSeconds: 15 * MIN },
  'login:email': { points: 100, durationSeconds: 15 * MIN },
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

/** The options the auth area reads: token and session lifetimes, password rules, throttling,
 *  and which optional routes are on. */
export type AuthOptions = Pick<
  PosternOptions,
  | 'issuer'
  | 'audience'
  | 'accessTokenTtlSeconds'
  | 'refreshTokenTtlSeconds'
  | 'refreshIdleSeconds'
  | 'refreshReuseGraceSeconds'
  | 'cookieSessions'
  | 'maxSessionsPerUser'
  | 'defaultRoles'
  | 'passwordPolicy'
  | 'passwordHashing'
  | 'throttle'
  | 'routes'
>;

export function resolveAuthConfig(o: AuthOptions): AuthConfig {
  const throttle = { ...defaultThrottle };
  for (const [bucket, limit] of Object.entries(o.throttle ?? {}) as Array<[ThrottleBucket, ThrottleLimit]>) {
    if (!Object.hasOwn(defaultThrottle, bucket)) throw new ConfigError(`unknown throttle bucket ${bucket}`);
    throttle[bucket] = {
      points: integerOption(`throttle.${bucket}.points`, limit.points, 1),
      durationSeconds: integerOption(`throttle.${bucket}.durationSeconds`, limit.durationSeconds, 1),
    };
  }
  const refreshTokenTtlSeconds = integerOption('refreshTokenTtlSeconds', o.refreshTokenTtlSeconds, 30 * DAY);
  const minScore = o.passwordPolicy?.minScore ?? 3;
  if (![0, 1, 2, 3, 4].includes(minScore)) throw new ConfigError('passwordPolicy.minScore must be 0-4');
  const h = o.passwordHashing ?? {};
  const accessTokenTtlSeconds = integerOption('accessTokenTtlSeconds', o.accessTokenTtlSeconds, 15 * MIN);
  if (accessTokenTtlSeconds > DAY) throw new ConfigError('accessTokenTtlSeconds must be at most one day');
  return {
    accessTokenTtlSeconds,
    refreshTokenTtlSeconds,
    refreshIdleSeconds: Math.min(
      integerOption('refreshIdleSeconds', o.refreshIdleSeconds, 7 * DAY),
      refreshTokenTtlSeconds,
    ),
    refreshReuseGraceSeconds: integerOption('refreshReuseGraceSeconds', o.refreshReuseGraceSeconds, 0, 0),
    cookieSessions: resolveCookieSessions(o.cookieSessions),
    maxSessionsPerUser: integerOption('maxSessionsPerUser', o.maxSessionsPerUser, 50),
    defaultRoles: [...(o.defaultRoles ?? ['user'])],
    minScore,
    isBreached: o.passwordPolicy?.isBreached,
    hashing: {
      memoryCost: integerOption('passwordHashing.memoryCost', h.memoryCost, 19456, 8),
      timeCost: integerOption('passwordHashing.timeCost', h.timeCost, 2),
      parallelism: integerOption('passwordHashing.parallelism', h.parallelism, 1),
      concurrency: integerOption('passwordHashing.concurrency', h.concurrency, 4),
      maxQueue: integerOption('passwordHashing.maxQueue', h.maxQueue, 1000, 0),
    },
    throttle,
    signup: o.routes?.signup !== false,
    emailVerification: o.routes?.emailVerification !== false,
    emailChange: o.routes?.emailChange !== false,
    issuer: o.issuer,
    audience: o.audience,
  };
}
