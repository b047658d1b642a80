/** A user account. `email` is the canonical form (trim, NFC, lower case). */
export interface User {
  id: string;
  email: string;
  name: string;
  /** Argon2id PHC string. */
  passwordHash: string;
  roles: string[];
  emailVerified: boolean;
  disabled: boolean;
  createdAt: Date;
  passwordChangedAt: Date;
}

/** User accounts. Emails are stored and looked up in canonical form only (the caller
 *  canonicalises); uniqueness is on that form. */
export interface UserStore {
  /** Inserts `user`. Atomic uniqueness on `email`: when the canonical email is already
   *  registered nothing is written and the result is `null` (two concurrent signups with one
   *  email: exactly one gets the user). */
  create(user: User): Promise<User | null>;
  findById(id: string): Promise<User | null>;
  /** The user as committed once every transaction that is changing it has ended: a write in
   *  flight (a password reset, a disable) is waited for, never read past (Postgres:
   *  `FOR SHARE`). A login reads this after creating its session or pending login, so a
   *  change either committed before (and shows here) or ends what the login created. Call it
   *  outside transactions: inside one, Postgres holds the share lock until it ends. */
  findByIdSettled(id: string): Promise<User | null>;
  /** `email` must already be canonical. */
  findByEmail(email: string): Promise<User | null>;
  /** Replaces the password hash. With `ifHash`, only when the stored hash still equals it
   *  (compare-and-set, so a rehash at login never overwrites a password changed meanwhile).
   *  Returns false when the user is absent or `ifHash` did not match. */
  setPassword(
    id: string,
    change: { passwordHash: string; changedAt: Date; ifHash?: string },
  ): Promise<boolean>;
  /** Returns false when the user is absent; true otherwise, even when it already had that state. */
  setDisabled(id: string, disabled: boolean): Promise<boolean>;
  /** Replaces the user's roles. Returns false when the user is absent. */
  setRoles(id: string, roles: string[]): Promise<boolean>;
  /** Replaces the email (canonical) and marks it proven, atomically with the uniqueness check:
   *  `taken` when another user has it (nothing written; of concurrent changes to one address
   *  exactly one wins), `absent` when the user is gone. */
  changeEmail(id: string, email: string): Promise<'changed' | 'taken' | 'absent'>;
  /** Marks the email address as proven (a mailed code came back). False when absent. */
  markEmailVerified(id: string): Promise<boolean>;
  /** Deletes the user and, atomically with it, the MFA data stored under its id: factors, a
   *  pending TOTP seed, pending logins, emailed codes, recovery codes, WebAuthn credentials and
   *  challenges. Sessions stay (the caller ends them first; ended sessions feed the ended-sid
   *  list). Returns false when the user was absent. */
  delete(id: string): Promise<boolean>;
}
