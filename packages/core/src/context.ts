import type { ThrottleBucket } from './auth/option-types.js';
import type { PosternOptions } from './options.js';
import type { Clock } from './ports/clock.js';
import type { LimiterRecord } from './ports/limiter-store.js';
import type { Logger } from './ports/logger.js';
import type { Mailer } from './ports/mailer.js';
import type { MfaMethod } from './ports/mfa-method.js';
import type { Settings } from './ports/settings.js';
import type { Stores } from './ports/stores.js';
import type { User } from './ports/user-store.js';
import type { Keyring } from './tokens/keyring.js';
import type { RequestMeta } from './util/security-log.js';

export type { ThrottleBucket } from './auth/option-types.js';
export type { MfaMethod } from './ports/mfa-method.js';

/** The session answer of every route that completes a login. */
export interface SessionAnswer {
  accessToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
  refreshToken?: string;
}

/** A new session: the answer for the client, and its id for the caller's log line. */
export interface IssuedSession {
  sid: string;
  answer: SessionAnswer;
}

/** Issues a session (access token + optional refresh token family). Built from the auth
 *  area's services, used by the MFA area to complete a pending login. */
export interface SessionIssuer {
  /** A session for `user` as read when its credentials were checked. `null`: its password
   *  changed, or it was disabled or deleted, since then (the session was ended at once). */
  issue(
    user: User,
    opts: {
      /** `'cookie'`: a browser session whose refresh token travels in the cookie. */
      refresh: boolean | 'cookie';
      amr: string[];
      authTime?: number;
      ip: string;
      userAgent?: string;
    },
  ): Promise<IssuedSession | null>;
  /** Ends every session (refresh-token family) of the user except `exceptSid`; their access
   *  tokens are refused from then on. */
  endAll(userId: string, opts?: { exceptSid?: string; reason: string }): Promise<void>;
}

/** Password hashing (Argon2id, capped concurrency) and the strength policy. Built from the auth area's options. */
export interface PasswordService {
  hash(password: string): Promise<string>;
  /** Verifies `password` against the user's hash (a dummy hash when `user` is null, same cost). */
  verify(user: { passwordHash: string } | null, password: string): Promise<boolean>;
  /** Throws 400 validation_failed when too weak; `context` = the user's email, name; `field`
   *  = the body field the error names (default `password`). */
  assertStrong(password: string, context: string[], field?: string): void;
}

/** Throttling on the limiter port, with the auth area's limits; used by every flow. */
export interface Throttle {
  /** Counts one attempt in each bucket before the work it guards (a password or code check),
   *  atomically, so parallel requests cannot all pass before any is counted. Throws 429
   *  `rate_limited` (with retryAfter) when a bucket is over its limit, after giving back what
   *  this attempt took in the buckets before it. `release()` gives the points back when the
   *  attempt succeeds (the buckets count failures): all of them, or those of the named buckets.
   *  `settle()` does that for `giveBack`, clears the `clear` buckets' keys and the `counters`
   *  (other limiter keys, such as an account's failure counter), in one store call, answering
   *  what each counter held. Every bucket is counted in one store call too; a refused
   *  attempt's points in the other buckets are given back. Neither `release()` nor `settle()`
   *  throws (a failure is logged, and the counters then read as empty). */
  take(...entries: Array<readonly [ThrottleBucket, string]>): Promise<{
    release(...buckets: ThrottleBucket[]): Promise<void>;
    settle(
      giveBack: ThrottleBucket[],
      clear: ThrottleBucket[],
      counters?: string[],
    ): Promise<Array<LimiterRecord | null>>;
  }>;
  /** Counts one event (a send for cooldown buckets, a request); throws 429 when this one is over the limit. */
  hit(bucket: ThrottleBucket, key: string): Promise<void>;
  /** Clears a key (e.g. after a successful login). */
  reset(bucket: ThrottleBucket, key: string): Promise<void>;
}

export interface MfaRequiredAnswer {
  mfaRequired: true;
  mfaToken: string;
  methods: Array<MfaMethod | 'recovery'>;
  /** With `mfa.required`, a user without a method gets `methods: []` and the methods to enrol
   *  now through `/auth/mfa/enrol/*` with this pending token. */
  enrol?: MfaMethod[];
}

/** The MFA area's entry point for login: what `createMfaArea` returns for the auth area. */
export interface MfaGate {
  /** Enabled (confirmed) methods of the user; empty = MFA off. */
  methods(userId: string): Promise<MfaMethod[]>;
  /** Starts a pending login for a user whose password was just verified (as read then);
   *  `null` when that password changed meanwhile (see `issue`). */
  begin(
    user: User,
    opts: { refresh: boolean | 'cookie'; methods: MfaMethod[]; meta: RequestMeta },
  ): Promise<MfaRequiredAnswer | null>;
  /** Kills every pending login of the user (password reset or change). Pass the stores of
   *  the caller's transaction so the kill commits with the change (and uses its connection:
   *  a one-connection pool would otherwise wait on itself); default the context's stores. */
  voidPending(userId: string, stores?: Stores): Promise<void>;
  /** `mfa.required`: a user without a method must enrol one before any session, so the login
   *  calls `begin` (with `methods: []`) for them too. */
  required?: boolean;
}

/** What `createPostern` makes from the options alone, before any service. */
export interface PosternBase {
  options: PosternOptions;
  stores: Stores;
  keyring: Keyring;
  clock: Clock;
  logger: Logger;
  mailer: Mailer;
  settings: Settings;
}

/** Everything the areas share: the base and the services built on it, all made by
 *  `createPostern` before any area, so an area never sees a field that is not there yet. */
export interface PosternContext extends PosternBase {
  sessions: SessionIssuer;
  passwords: PasswordService;
  throttle: Throttle;
}
