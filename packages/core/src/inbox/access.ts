import { logAuthEvent, type RequestMeta } from '../auth/log.js';
import type { PosternContext } from '../context.js';
import { PosternError } from '../errors.js';
import type { InboxAccount, InboxMembership, InboxRole } from '../ports/inbox-account-store.js';
import type { InboxThread } from '../ports/inbox-thread-store.js';
import type { User } from '../ports/user-store.js';

/** Who asks, for the log line of a refusal: the request and the caller's session. */
export type AccessMeta = RequestMeta & { sid?: string };

/** Whether a membership grants anything yet. The user who created the account always counts;
 *  a member added by email counts only once that user's address is proven (`emailVerified`):
 *  until then whoever registered the address first, perhaps not its owner, would read the
 *  account's mail. Judged when access is asked for, so the proof (verification, a password
 *  reset, an email change) activates it at once, with nothing to keep in step. */
export const membershipCounts = (
  m: Pick<InboxMembership, 'addedBy'>,
  user: Pick<User, 'emailVerified'> | null,
): boolean => m.addedBy === null || user?.emailVerified === true;

/** The user's role in the account, and whether the membership still waits for a proven
 *  address (`membershipCounts`); `null` when not a member. */
async function membershipState(
  ctx: PosternContext,
  accountId: string,
  userId: string,
): Promise<{ role: InboxRole; pending: boolean } | null> {
  const m = await ctx.stores.inboxAccounts.membershipOf(accountId, userId);
  if (!m) return null;
  if (m.addedBy === null) return { role: m.role, pending: false };
  return { role: m.role, pending: !membershipCounts(m, await ctx.stores.users.findById(userId)) };
}

/** The user's role in the account when the membership counts; `null` when not a member, or a
 *  member still waiting for a proven address. */
export async function activeRole(
  ctx: PosternContext,
  accountId: string,
  userId: string,
): Promise<InboxRole | null> {
  const m = await membershipState(ctx, accountId, userId);
  return m && !m.pending ? m.role : null;
}

/** Membership check of every inbox route and library call: unknown id -> 404 `not_found`;
 *  known, but the caller is not a member (or not an owner where `need` is `owner`, or a member
 *  whose address is not proven yet) -> 403. */
export async function requireAccount(
  ctx: PosternContext,
  userId: string,
  accountId: string,
  need: InboxRole = 'member',
  meta: AccessMeta = {},
): Promise<{ account: InboxAccount; role: InboxRole }> {
  const account = await ctx.stores.inboxAccounts.findById(accountId);
  if (!account) throw new PosternError('not_found');
  const m = await membershipState(ctx, accountId, userId);
  const role = m && !m.pending ? m.role : null;
  if (role === null || (need === 'owner' && role !== 'owner')) {
    logAuthEvent(
      ctx.logger,
      'info',
      {
        event: 'authorization_denied',
        outcome: 'failure',
        reason: m?.pending ? 'inbox_address_unproven' : `inbox_${need}_required`,
        userId,
        sid: meta.sid,
        accountId,
      },
      meta,
    );
    throw new PosternError('forbidden');
  }
  return { account, role };
}

export async function requireThread(
  ctx: PosternContext,
  userId: string,
  threadId: string,
  meta: AccessMeta = {},
): Promise<{ thread: InboxThread; account: InboxAccount; role: InboxRole }> {
  const thread = await ctx.stores.inboxThreads.findById(threadId);
  if (!thread || thread.messageCount === 0) throw new PosternError('not_found');
  return { thread, ...(await requireAccount(ctx, userId, thread.accountId, 'member', meta)) };
}
