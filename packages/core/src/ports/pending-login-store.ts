import type { MfaMethod } from '../context.js';

/** Server state of one pending MFA login (the `jti` of its `mfa+jwt` token). */
export interface PendingLogin {
  jti: string;
  userId: string;
  /** The login asked for a refresh token; `'cookie'`: in the browser-session cookie. */
  refresh: boolean | 'cookie';
  /** Methods offered when the login started. */
  methods: MfaMethod[];
  createdAt: Date;
  expiresAt: Date;
  /** Wrong codes so far (all routes together). */
  failures: number;
  /** Email codes sent for this login. */
  sends: number;
  lastSentAt: Date | null;
}

export type ClaimSendResult =
  | { ok: true; sends: number }
  | { ok: false; reason: 'cooldown' | 'exhausted'; retryAfterSeconds: number };

/** Pending logins. A pending login is live while it exists, is not expired, and has fewer
 *  failures than the limit; it is deleted when it completes, dies or is voided. */
export interface PendingLoginStore {
  create(pending: PendingLogin): Promise<void>;
  /** The live pending login, or null (absent, completed, voided, or expired at `now`). */
  get(jti: string, now: Date): Promise<PendingLogin | null>;
  /** Atomically counts one wrong code. When the count reaches `max` the pending login is
   *  deleted. Returns the new count, or null when it was not live. */
  recordFailure(jti: string, max: number, now: Date): Promise<number | null>;
  /** Atomically deletes and returns the live pending login: of concurrent callers exactly one
   *  gets it, the others null. This is what makes a pending token single use. */
  consume(jti: string, now: Date): Promise<PendingLogin | null>;
  /** Atomically claims one email send: succeeds when `sends < maxSends` and the last send is at
   *  least `cooldownSeconds` old (then `sends + 1`, `lastSentAt = now`). Null when not live. */
  claimSend(
    jti: string,
    now: Date,
    limits: { cooldownSeconds: number; maxSends: number },
  ): Promise<ClaimSendResult | null>;
  /** Deletes every pending login of the user (password reset or change); returns how many. */
  voidForUser(userId: string): Promise<number>;
}
