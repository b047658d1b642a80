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
  /** The owner who added this member by email; `null` for the user who created the account
   *  (a store may hold `''` for an adder it does not know: treated as added, never as creator).
   *  A member added by email counts only once their address is proven (see `inbox/access.ts`). */
  addedBy: string | null;
}

/** Inbox accounts and who belongs to them. */
export interface InboxAccountStore {
  /** Inserts the account and `ownerUserId` as its owner (`addedBy` null) in one atomic step.
   *  The address is unique: when it is taken, nothing is written and the result is `null`. */
  create(account: InboxAccount, ownerUserId: string): Promise<InboxAccount | null>;
  findById(id: string): Promise<InboxAccount | null>;
  /** Exact match on the canonical address. */
  findByAddress(address: string): Promise<InboxAccount | null>;
  /** Accounts the user belongs to, with the user's role and who added them, oldest account first. */
  listForUser(
    userId: string,
  ): Promise<Array<{ account: InboxAccount; role: InboxRole; addedBy: string | null }>>;
  /** The user's role in the account; `null` when not a member. */
  roleOf(accountId: string, userId: string): Promise<InboxRole | null>;
  /** The user's membership of the account; `null` when not a member. */
  membershipOf(accountId: string, userId: string): Promise<InboxMembership | null>;
  /** Every membership of the account, oldest first. */
  listMembers(accountId: string): Promise<InboxMembership[]>;
  /** Adds the user with `role` (recording `addedBy`, the owner adding them), or changes the role
   *  of an existing member (who added them stays as recorded), atomically.
   *  Never leaves an account without an owner: turning its only owner into a member writes
   *  nothing and returns `'last_owner'` (concurrent demotions: at most all but one succeed). */
  setMember(
    accountId: string,
    userId: string,
    role: InboxRole,
    now: Date,
    addedBy: string,
  ): Promise<{ membership: InboxMembership; created: boolean } | 'last_owner'>;
  /** Undoes the access a user granted while its address was unproven, in one atomic step: in
   *  every account the user created (its membership with `addedBy` null), every other membership
   *  is deleted and the user is its owner again (whoever demoted it); anywhere else, every
   *  membership the user added is deleted. Returns how many memberships were deleted. */
  dropGrantsOf(userId: string): Promise<number>;
}
