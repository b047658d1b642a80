import { logAuthEvent } from '../auth/log.js';
import type { GatehouseContext } from '../context.js';
import { GatehouseError } from '../errors.js';
import type { InboxAccount, InboxRole } from '../ports/inbox-account-store.js';
import type { InboxThread } from '../ports/inbox-thread-store.js';

/** Membership check of every inbox route and library call: unknown id -> 404 `not_found`;
 *  known, but the caller is not a member (or not an owner where `need` is `owner`) -> 403. */
export async function requireAccount(
  ctx: GatehouseContext,
  userId: string,
  accountId: string,
  need: InboxRole = 'member',
): Promise<{ account: InboxAccount; role: InboxRole }> {
  const account = await ctx.stores.inboxAccounts.findById(accountId);
  if (!account) throw new GatehouseError('not_found');
  const role = await ctx.stores.inboxAccounts.roleOf(accountId, userId);
  if (role === null || (need === 'owner' && role !== 'owner')) {
    // The library call has no request: address, route and request id are logged as null.
    logAuthEvent(ctx.logger, 'info', {
      event: 'authorization_denied',
      outcome: 'failure',
      reason: `inbox_${need}_required`,
      userId,
      accountId,
    });
    throw new GatehouseError('forbidden');
  }
  return { account, role };
}

export async function requireThread(
  ctx: GatehouseContext,
  userId: string,
  threadId: string,
): Promise<{ thread: InboxThread; account: InboxAccount; role: InboxRole }> {
  const thread = await ctx.stores.inboxThreads.findById(threadId);
  if (!thread || thread.messageCount === 0) throw new GatehouseError('not_found');
  return { thread, ...(await requireAccount(ctx, userId, thread.accountId)) };
}
