import { randomUUID } from 'node:crypto';
import { PosternError } from '../errors.js';
import { validate } from '../http/handle.js';
import type { InboxMembership, InboxRole } from '../ports/inbox-account-store.js';
import type { User } from '../ports/user-store.js';
import { ipOf } from '../util/security-log.js';
import { type AccessMeta, activeRole, membershipCounts, requireAccount, requireThread } from './access.js';
import { stripTag } from './addresses.js';
import type { AttachmentDownload } from './api-types.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import type { InboxContext } from './deps.js';
import type { ResolvedInboxOptions } from './options.js';
import { type RecordOutboundInput, sendReply, storeOutbound } from './outbound.js';
import { addMemberBody, createAccountBody, recordOutboundInput, replyBody } from './schemas.js';
import {
  type AccountView,
  accountView,
  type MemberView,
  type MessageView,
  messageView,
  type ThreadDetail,
  type ThreadSummary,
  threadSummary,
} from './views.js';

const memberView = (m: InboxMembership, user: User): MemberView => ({
  accountId: m.accountId,
  userId: m.userId,
  email: user.email,
  role: m.role,
  pending: !membershipCounts(m, user),
});

/** A sub-address (`sales+orders@x`) belongs to its base's mailbox: when an account owns the base
 *  (`sales@x`), only an owner of that account may claim the sub-address (else 403 `forbidden`);
 *  another user would receive mail meant for the base's owners. */
async function claimableSubAddress(ctx: InboxContext, userId: string, address: string): Promise<void> {
  const base = stripTag(address);
  if (base === address) return;
  const owner = await ctx.stores.inboxAccounts.findByAddress(base);
  if (owner && (await activeRole(ctx, owner.id, userId)) !== 'owner') {
    throw new PosternError('forbidden', {
      detail: 'the address without its +tag is another inbox account; only its owners may claim this one',
    });
  }
}

/** `ph.inbox` is declared in api-types.ts; the routes take it from here. */
export type { AttachmentDownload, InboxApi } from './api-types.js';

async function withAttachments(ctx: InboxContext, m: Parameters<typeof messageView>[0]) {
  return messageView(m, await ctx.stores.inboxAttachments.listByMessages([m.id]));
}

/** `ph.inbox`: the inbox API as functions. Every call that names a user checks membership
 *  exactly like the HTTP routes (404 unknown id, 403 not a member / not an owner). */
export function createInboxApi(ctx: InboxContext, opts: ResolvedInboxOptions) {
  return {
    /** Creates an account for `address`; the caller becomes its owner. */
    async createAccount(userId: string, input: { address: string; name: string }): Promise<AccountView> {
      // The schema hands over the canonical address.
      const body = validate(createAccountBody, input);
      const address = body.address;
      // Every well-formed attempt counts, refused or taken alike: the answer tells which
      // addresses are taken, and each account is kept for good.
      await ctx.throttle.hit('inbox-account:user', userId);
      await claimableSubAddress(ctx, userId, address);
      if (!(await opts.canCreateAccount({ userId, address }))) throw new PosternError('forbidden');
      const account = await ctx.stores.inboxAccounts.create(
        { id: randomUUID(), address, name: body.name, createdAt: ctx.clock.now() },
        userId,
      );
      if (!account) {
        throw new PosternError('validation_failed', {
          errors: [{ path: 'address', message: 'an inbox account already uses this address' }],
        });
      }
      return accountView(account, 'owner');
    },

    /** Adds a registered user by email (owners only), or changes that member's role. */
    async addMember(
      userId: string,
      accountId: string,
      input: { email: string; role: InboxRole },
      meta: AccessMeta = {},
    ): Promise<{ member: MemberView; created: boolean }> {
      // Access before validation: a caller without access learns nothing from a field error.
      await requireAccount(ctx, userId, accountId, 'owner', meta);
      const body = validate(addMemberBody, input);
      // A 404 tells which emails are registered: misses are counted per caller and address,
      // before the lookup, so a caller over the limit learns nothing more. Only misses: a found
      // user, or a lookup the store failed, gives the point back.
      const lookup = await ctx.throttle.take(['member:user', userId], ['member:ip', ipOf(meta)]);
      let user: User | null | undefined;
      try {
        user = await ctx.stores.users.findByEmail(body.email);
      } finally {
        if (user !== null) await lookup.release(); // found, or the store failed
      }
      if (!user) throw new PosternError('not_found', { detail: 'no user with this email' });
      const r = await ctx.stores.inboxAccounts.setMember(
        accountId,
        user.id,
        body.role,
        ctx.clock.now(),
        userId,
      );
      if (r === 'last_owner') {
        throw new PosternError('validation_failed', {
          errors: [{ path: 'role', message: 'an account keeps at least one owner' }],
        });
      }
      return { member: memberView(r.membership, user), created: r.created };
    },

    /** Every member of the account with their role, and `pending` for those added by email who
     *  have not proven their address yet (owners only). */
    async listMembers(userId: string, accountId: string, meta: AccessMeta = {}): Promise<MemberView[]> {
      await requireAccount(ctx, userId, accountId, 'owner', meta);
      const members = await ctx.stores.inboxAccounts.listMembers(accountId);
      const out: MemberView[] = [];
      for (const m of members) {
        const user = await ctx.stores.users.findById(m.userId);
        if (user) out.push(memberView(m, user));
      }
      return out;
    },

    /** The accounts whose membership counts: one waiting for a proven address is left out (it
     *  grants nothing yet, not even the account's name). */
    async listAccounts(userId: string): Promise<AccountView[]> {
      const all = await ctx.stores.inboxAccounts.listForUser(userId);
      const user = all.some((a) => a.addedBy !== null) ? await ctx.stores.users.findById(userId) : null;
      return all.filter((a) => membershipCounts(a, user)).map((a) => accountView(a.account, a.role));
    },

    /** Threads newest first; pass `nextCursor` back as `cursor` for the next page. */
    async listThreads(
      userId: string,
      accountId: string,
      page: { cursor?: string | null; limit?: number } = {},
      meta: AccessMeta = {},
    ): Promise<{ threads: ThreadSummary[]; nextCursor: string | null }> {
      await requireAccount(ctx, userId, accountId, 'member', meta);
      const limit = Math.min(Math.max(1, Math.trunc(page.limit ?? opts.pageSize)), 200);
      const after = page.cursor ? decodeCursor(page.cursor) : undefined;
      const rows = await ctx.stores.inboxThreads.listByAccount(accountId, {
        ...(after ? { after } : {}),
        limit: limit + 1,
      });
      const threads = rows.slice(0, limit);
      return {
        threads: threads.map(threadSummary),
        nextCursor: rows.length > limit ? encodeCursor(threads.at(-1)!) : null,
      };
    },

    /** The thread with its messages (oldest first), statuses and attachment metadata. */
    async getThread(userId: string, threadId: string, meta: AccessMeta = {}): Promise<ThreadDetail> {
      const { thread } = await requireThread(ctx, userId, threadId, meta);
      const messages = await ctx.stores.inboxMessages.listByThread(thread.id);
      const attachments = await ctx.stores.inboxAttachments.listByMessages(messages.map((m) => m.id));
      return {
        thread: {
          id: thread.id,
          accountId: thread.accountId,
          subject: thread.subject,
          lastMessageAt: thread.lastMessageAt.toISOString(),
          messageCount: thread.messageCount,
        },
        messages: messages.map((m) => messageView(m, attachments)),
      };
    },

    /** An attachment's bytes and metadata (members of its account only). */
    async getAttachment(
      userId: string,
      attachmentId: string,
      meta: AccessMeta = {},
    ): Promise<AttachmentDownload> {
      const attachment = await ctx.stores.inboxAttachments.findById(attachmentId);
      if (!attachment) throw new PosternError('not_found');
      await requireAccount(ctx, userId, attachment.accountId, 'member', meta);
      const bytes = await ctx.files.get(attachment.fileKey);
      if (!bytes) throw new PosternError('not_found');
      return { filename: attachment.filename, contentType: attachment.contentType, bytes };
    },

    /** Replies on a thread through the provider (or the mailer) and stores the outbound message. */
    async reply(
      userId: string,
      threadId: string,
      input: { text: string; html?: string },
      meta: AccessMeta = {},
    ): Promise<MessageView> {
      const { thread, account } = await requireThread(ctx, userId, threadId, meta);
      const body = validate(replyBody, input);
      // Counted before the send: a reply is mail from the host's domain, failed or not.
      await ctx.throttle.hit('reply:user', userId);
      return withAttachments(ctx, await sendReply(ctx, account, thread, body));
    },

    /** Records mail the host sent itself (no membership check: a host call). */
    async recordOutbound(input: RecordOutboundInput): Promise<MessageView> {
      const { accountId, threadId, ...rest } = validate(recordOutboundInput, input);
      const account = await ctx.stores.inboxAccounts.findById(accountId);
      if (!account) throw new PosternError('not_found', { detail: 'unknown inbox account' });
      let thread = null;
      if (threadId !== undefined) {
        thread = await ctx.stores.inboxThreads.findById(threadId);
        if (!thread || thread.accountId !== account.id) {
          throw new PosternError('not_found', { detail: 'unknown thread' });
        }
      }
      return withAttachments(ctx, await storeOutbound(ctx, account, thread, rest));
    },
  };
}
