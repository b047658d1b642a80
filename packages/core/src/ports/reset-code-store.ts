/** A password-reset code; only its SHA-256 is stored. The code itself identifies the
 *  request (the reset route takes no email). */
export interface ResetCode {
  /** base64url SHA-256 of the code. */
  hash: string;
  userId: string;
  /** The address the code was mailed to: a code for an address the user has since left is
   *  dead (an email change racing a reset request). Empty for codes a store kept without one
   *  (Postgres rows from before migration 0008): those are taken as before. */
  email: string;
  createdAt: Date;
  expiresAt: Date;
}

/** Password-reset codes: at most one live code per user. */
export interface ResetCodeStore {
  /** Stores the code and, in the same atomic step, voids every older code of that user. */
  create(code: ResetCode): Promise<void>;
  /** The live code (unused, not voided, `now` before `expiresAt`), without using it. */
  find(hash: string, now: Date): Promise<ResetCode | null>;
  /** Atomically deletes and returns the live code: concurrent callers with one hash, exactly
   *  one gets it, the others `null`. Unknown, used, voided or expired: `null`. */
  consume(hash: string, now: Date): Promise<ResetCode | null>;
  /** Voids the user's live code, if any (the address it was mailed to is no longer theirs). */
  voidForUser(userId: string): Promise<void>;
}
