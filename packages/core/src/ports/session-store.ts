/** One session = one refresh-token family. Its id is the `sid` claim of every access token
 *  issued in it. A session without refresh tokens (login without `refreshToken: true`) ends
 *  with its first access token. */
export interface Session {
  id: string;
  userId: string;
  createdAt: Date;
  /** Absolute end, fixed at creation (counted from the login, never extended). */
  expiresAt: Date;
  /** Idle end: moved forward by each rotation, never past `expiresAt`. */
  idleExpiresAt: Date;
  lastUsedAt: Date;
  /** The login that started the session (access tokens carry it as `auth_time`). */
  authTime: Date;
  /** Authentication methods of that login (`amr`), e.g. `['pwd', 'otp']`. */
  amr: string[];
  ip: string;
  userAgent: string | null;
  /** A browser session (login `refreshToken: 'cookie'`): its refresh token travels in an
   *  HttpOnly cookie, and a repeat of its just-rotated token gets the newest token again
   *  (see `rotate`). Absent: false. */
  cookie?: boolean;
  /** Set once the session is ended (logout, reuse, reset, revocation, disable, eviction). */
  endedAt: Date | null;
  endReason: string | null;
}

/** The refresh token handed out with a session or a rotation: only its SHA-256 is stored. */
export interface NewRefreshToken {
  /** base64url SHA-256 of the token. */
  hash: string;
  /** New idle end of the session (the store clamps it to `expiresAt`). */
  idleExpiresAt: Date;
  /** On a rotation: the salt the token was derived with from the presented one
   *  (`successorToken`). A cookie session keeps it with the new token (others need not), so a
   *  repeat of the presented token can derive the same successor again, and only as long as
   *  such a repeat may come: the salt goes when the new token is itself rotated, and once the
   *  presented token was rotated more than `LONGEST_REUSE_WINDOW_SECONDS` ago (a store's
   *  sweep). A stored salt and an old token would otherwise lead to every later token. */
  salt?: string;
}

/** The longest `cookieSessions.reuseWindowSeconds` accepted: after it, no repeat needs a salt. */
export const LONGEST_REUSE_WINDOW_SECONDS = 60;

/** How often one session may rotate its refresh token. */
export interface RotationBudget {
  rotations: number;
  windowSeconds: number;
}

/** A refresh token's family and whether it was already rotated. */
export interface RefreshTokenLookup {
  session: Session;
  /** When the token was rotated (used); null while it is the live one. */
  usedAt: Date | null;
}

/** A rotation refused for the session's budget (see `rotate`): the token stays as it was. */
export interface RotationRefused {
  refused: 'budget';
  /** When the session's window ends and a rotation may succeed again. */
  retryAt: Date;
}

/** A cookie session's repeat of its just-rotated token within the reuse window: nothing
 *  rotated; the caller derives the newest token again from the presented one and `salt`. */
export interface RotationRepeat {
  repeat: 'cookie';
  session: Session;
  /** The salt kept with the presented token's successor, the family's newest token. */
  salt: string;
}

/** Ended sessions since a cursor: the feed that tells every instance which `sid`s to refuse. */
export interface EndedSessionsPage {
  sids: string[];
  /** Opaque; pass it to the next call. */
  cursor: string;
}

/** Sessions (refresh-token families). A session is live when `endedAt` is null and `now` is
 *  before both `expiresAt` and `idleExpiresAt`. Every method that ends sessions records them
 *  in the ended feed (`endedSince`) in the same atomic step. */
export interface SessionStore {
  /** True when reads cost no I/O (in-process memory): the auth area then reads the ended feed
   *  on every Bearer check instead of polling it. Absent/false for databases. */
  readonly inProcess?: boolean;
  /** Atomically inserts the session and its first refresh token (`null`: no refresh token),
   *  then ends (reason `evicted`) the user's oldest live sessions beyond `maxPerUser`.
   *  Returns the evicted session ids. The session is a new one, live: its `endedAt` and
   *  `endReason` are null (a store need not keep them from the argument). */
  create(session: Session, token: NewRefreshToken | null, opts: { maxPerUser: number }): Promise<string[]>;
  findById(id: string): Promise<Session | null>;
  /** The family of a refresh token (live, rotated, ended or expired alike), or null. */
  findByToken(hash: string): Promise<RefreshTokenLookup | null>;
  /** One atomic step: when `hash` is the live (unused) token of a live session, mark it used
   *  at `now`, insert `next` in the same session, set `lastUsedAt = now` and move
   *  `idleExpiresAt`, and return the updated session. Concurrent callers with one hash:
   *  exactly one wins; the others get `null`. The just-rotated token (used at most
   *  `graceSeconds` ago, default 0 = never, and none of the tokens rotated out of it used
   *  since) may rotate again into a sibling (two tabs refreshing at once). Otherwise
   *  `null` (unknown, already used, or session not live): on reuse the caller ends the family.
   *  With `budget`, a session rotates at most `rotations` times in a window of `windowSeconds`
   *  (the first rotation after a window ended starts the next): a token that would rotate
   *  (the live one, or a grace repeat) gets `RotationRefused` over it and stays as it was, so
   *  the caller answers "later" instead of taking it for reuse (every rotation stores a token
   *  row for the session's life, so an unbounded loop would grow the store without end).
   *  A cookie session (`Session.cookie`) uses `cookieGraceSeconds` instead of `graceSeconds`
   *  and never forks: its just-rotated token (used at most that long ago, its one successor
   *  still unused) answers `RotationRepeat` with the successor's salt, rotating nothing and
   *  counting against no budget. */
  rotate(
    hash: string,
    next: NewRefreshToken,
    now: Date,
    opts?: { graceSeconds?: number; cookieGraceSeconds?: number; budget?: RotationBudget },
  ): Promise<Session | RotationRefused | RotationRepeat | null>;
  /** Ends one session. True when it was live and is now ended; false when absent or already ended. */
  revoke(id: string, now: Date, reason: string): Promise<boolean>;
  /** Ends every live session of the user except `exceptSid`; returns the ended ids. */
  revokeAllForUser(
    userId: string,
    now: Date,
    opts: { reason: string; exceptSid?: string },
  ): Promise<string[]>;
  /** Ends every live session of every user (key compromise); returns how many. */
  revokeAll(now: Date, reason: string): Promise<number>;
  /** Live sessions of the user at `now`, newest first. */
  listForUser(userId: string, now: Date): Promise<Session[]>;
  /** Ids of sessions ended after `cursor`; with `cursor` null, those ended at or after
   *  `notBefore`. Never skips an entry: an end committed after a cursor was handed out
   *  appears in a later page (a database implementation may re-read an overlap window; the
   *  caller treats the feed as a set). Entries may be pruned once older than the longest
   *  access-token lifetime (memory keeps 24 h). */
  endedSince(cursor: string | null, notBefore: Date): Promise<EndedSessionsPage>;
}
