export type InboxRole = 'owner' | 'member';

/** An `inbox_account`: one receiving address, with owners and members. */
export interface InboxAccount {
  id: string;
  /** Canonical address (trim, NFC, lower case). Unique across accounts. */
  address: string;
  name: string;
  createdAt: Date;
}

export interface InboxMembership {
  accountId: string;
  userId: string;
  role: InboxRole;
  createdAt: Date;
}

/** Inbox accounts and who belongs to them. */
export interface InboxAccountStore {
  /** Inserts the account and `ownerUserId` as its owner in one atomic step.
   *  The address is unique: when it is taken, nothing is written and the result is `null`. */
  create(account: InboxAccount, ownerUserId: string): Promise<InboxAccount | null>;
  findById(id: string): Promise<InboxAccount | null>;
  /** Exact match on the canonical address. */
  findByAddress(address: string): Promise<InboxAccount | null>;
  /** Accounts the user belongs to, with the user's role, oldest account first. */
  listForUser(userId: string): Promise<Array<{ account: InboxAccount; role: InboxRole }>>;
  /** The user's role in the account; `null` when not a member. */
  roleOf(accountId: string, userId: string): Promise<InboxRole | null>;
  /** Every membership of the account, oldest first. */
  listMembers(accountId: string): Promise<InboxMembership[]>;
  /** Adds the user with `role`, or changes the role of an existing member, atomically.
   *  Never leaves an account without an owner: turning its only owner into a member writes
   *  nothing and returns `'last_owner'` (concurrent demotions: at most all but one succeed). */
  setMember(
    accountId: string,
    userId: string,
    role: InboxRole,
    now: Date,
  ): Promise<{ membership: InboxMembership; created: boolean } | 'last_owner'>;
}
