// `ph.inbox` as a declared interface: what a host reads on hover and in the d.ts, checked
// against the functions `createInboxApi` builds (inbox/index.ts assigns one to the other).
import type { Consumer } from '../outbox/types.js';
import type { InboxRole } from '../ports/inbox-account-store.js';
import type { AccessMeta } from './access.js';
import type { RecordOutboundInput } from './outbound.js';
import type { AccountView, MemberView, MessageView, ThreadDetail, ThreadSummary } from './views.js';

/** An attachment as `getAttachment` hands it over. */
export interface AttachmentDownload {
  filename: string;
  contentType: string;
  bytes: Uint8Array;
}

/** A page of threads; `nextCursor` is `null` on the last one. */
export interface ThreadPage {
  threads: ThreadSummary[];
  nextCursor: string | null;
}

/** `ph.inbox`: inbox accounts, members, threads and messages as functions. Every call that names
 *  a user checks membership exactly like the HTTP routes (404 unknown id, 403 not a member / not
 *  an owner); `meta` (`ip`, `sid`) goes into the log lines and the per-address limits. */
export interface InboxApi {
  /** Creates an account for `address`; the caller becomes its owner. */
  createAccount(userId: string, input: { address: string; name: string }): Promise<AccountView>;
  /** Adds a registered user by email (owners only), or changes that member's role. */
  addMember(
    userId: string,
    accountId: string,
    input: { email: string; role: InboxRole },
    meta?: AccessMeta,
  ): Promise<{ member: MemberView; created: boolean }>;
  /** Every member of the account with their role, and `pending` for those added by email who
   *  have not proven their address yet (owners only). */
  listMembers(userId: string, accountId: string, meta?: AccessMeta): Promise<MemberView[]>;
  /** The accounts whose membership counts (one waiting for a proven address is left out). */
  listAccounts(userId: string): Promise<AccountView[]>;
  /** Threads newest first; pass `nextCursor` back as `cursor` for the next page. */
  listThreads(
    userId: string,
    accountId: string,
    page?: { cursor?: string | null; limit?: number },
    meta?: AccessMeta,
  ): Promise<ThreadPage>;
  /** The thread with its messages (oldest first), statuses and attachment metadata. */
  getThread(userId: string, threadId: string, meta?: AccessMeta): Promise<ThreadDetail>;
  /** An attachment's bytes and metadata (members of its account only). */
  getAttachment(userId: string, attachmentId: string, meta?: AccessMeta): Promise<AttachmentDownload>;
  /** Replies on a thread through the provider (or the mailer) and stores the outbound message. */
  reply(
    userId: string,
    threadId: string,
    input: { text: string; html?: string },
    meta?: AccessMeta,
  ): Promise<MessageView>;
  /** Records mail the host sent itself (no membership check: a host call). */
  recordOutbound(input: RecordOutboundInput): Promise<MessageView>;
  /** The outbox consumers of received webhooks, for a host that feeds them from its own queue. */
  consumers: {
    /** `inbox.mail.webhook.event.received`: delivery/engagement events. */
    delivery: Consumer;
    /** `inbox.mail.webhook.inbound.received`: inbound emails. */
    inbound: Consumer;
  };
}
