import type { PosternContext } from '../context.js';
import { PosternError } from '../errors.js';
import type { InboxAccount, InboxRole } from '../ports/inbox-account-store.js';
import type { InboxThread } from '../ports/inbox-thread-store.js';
import { logAuthEvent, type RequestMeta } from '../util/security-log.js';

/** Who asks, for the log line of a refusal: the request and the caller's session. */
export type AccessMeta = RequestMeta & { sid?: string };

/** Membership check of every inbox route and library call: unknown id -> 404 `not_found`;
 *  known, but the caller is not a member (or not an owner where `need` is `owner`) -> 403. */
export async function requireAccount(
  ctx: PosternContext,
  userId: string,
  accountId: string,
  need: InboxRole = 'member',
  meta: AccessMeta = {},
): Promise<{ account: InboxAccount; role: InboxRole }> {
  const account = await ctx.stores.inboxAccounts.findById(accountId);
  if (!account) throw new PosternError('not_found');
  const role = await ctx.stores.inboxAccounts.roleOf(accountId, userId);
  if (role === null || (need === 'owner' && role !== 'owner')) {
    logAuthEvent(
      ctx.logger,
      'info',
      {
        event: 'authorization_denied',
        outcome: 'failure',
        reason: `inbox_${need}_required`,
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
