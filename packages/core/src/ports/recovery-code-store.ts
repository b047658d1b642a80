/** One recovery code. The code is shown once; only its Argon2id hash is kept. */
export interface RecoveryCode {
  id: string;
  userId: string;
  /** First characters of the code, not secret: picks the one hash to check. */
  selector: string;
  /** Argon2id PHC string of the whole normalized code. */
  hash: string;
  createdAt: Date;
}

/** Recovery codes (only unused codes are kept). */
export interface RecoveryCodeStore {
  /** Atomically replaces the user's whole set: the old codes die. */
  replaceAll(userId: string, codes: RecoveryCode[]): Promise<void>;
  /** Stores the set only when the user has no codes, and tells whether it did. Atomic: of
   *  concurrent callers at most one stores (two first factors confirmed at once must not each
   *  show a set of which only the last would work). */
  addIfNone(userId: string, codes: RecoveryCode[]): Promise<boolean>;
  /** Unused codes of the user. */
  listUnused(userId: string): Promise<RecoveryCode[]>;
  /** Atomically uses the code: of concurrent callers exactly one gets `true`. */
  use(userId: string, id: string): Promise<boolean>;
  deleteAll(userId: string): Promise<void>;
}
