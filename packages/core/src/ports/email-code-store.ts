/** One emailed six-digit code, stored as a hash and bound to what it unlocks: MFA codes
 *  (`login:`, `enrol:`), email verification (`verify:`) and email change (`email-change:`). */
export interface EmailCode {
  /** What the code is bound to: `login:<pending jti>`, `enrol:<userId>`, `verify:<userId>` or
   *  `email-change:<userId>`. */
  key: string;
  userId: string;
  /** SHA-256 (hex) of the key and the code. */
  codeHash: string;
  createdAt: Date;
  expiresAt: Date;
}

/** Emailed codes: at most one live code per key. */
export interface EmailCodeStore {
  /** Stores the code, replacing (killing) any earlier code with the same key. */
  put(code: EmailCode): Promise<void>;
  /** Atomically deletes the code under `key` when it is live at `now` and its hash equals
   *  `codeHash` (compared in constant time). Concurrent callers: exactly one gets `true`.
   *  A wrong hash leaves the code in place. */
  consume(key: string, codeHash: string, now: Date): Promise<boolean>;
  /** True when the code under `key` is live at `now` and its hash equals `codeHash` (compared
   *  in constant time); uses nothing up. For codes whose single use is guarded elsewhere (a
   *  login code dies with its pending login, which is consumed atomically). */
  matches(key: string, codeHash: string, now: Date): Promise<boolean>;
  /** True when a live code exists under `key`. */
  has(key: string, now: Date): Promise<boolean>;
  delete(key: string): Promise<void>;
}
