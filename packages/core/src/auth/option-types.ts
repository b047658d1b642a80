// The auth area's option types: a leaf that the shared options and context import.

/** Named limiter buckets (docs/auth.md, Throttling; numbers are configuration). */
export type ThrottleBucket =
  | 'login:email+ip'
  | 'login:email'
  | 'login:ip'
  | 'code:user'
  | 'code:ip'
  | 'forgot:email'
  | 'forgot:ip'
  | 'resend'
  | 'mail:user'
  | 'confirm:user'
  | 'signup:ip'
  | 'webauthn:ip'
  | 'member:user'
  | 'member:ip'
  | 'inbox-account:user'
  | 'reply:user'
  | 'refresh:session';

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
