export type MessageDirection = 'inbound' | 'outbound';

/** Delivery statuses an outbound message moves through (docs/inbox.md). `queued`: accepted by
 *  the provider, no event yet. */
export type DeliveryStatus =
  | 'queued'
  | 'sent'
  | 'delayed'
  | 'delivered'
  | 'bounced'
  | 'complained'
  | 'failed';

/** `received` for inbound messages; a delivery status for outbound ones. */
export type MessageStatus = 'received' | DeliveryStatus;

/** Statuses only move to a higher rank (`sent < delayed < delivered < bounced|complained|failed`);
 *  the three final statuses share a rank, so the first one stays. */
export const STATUS_RANK: Readonly<Record<MessageStatus, number>> = {
  received: 0,
  queued: 0,
  sent: 1,
  delayed: 2,
  delivered: 3,
  bounced: 4,
  complained: 4,
  failed: 4,
};

/** An `inbox_message`, inbound or outbound. */
export interface InboxMessage {
  id: string;
  accountId: string;
  threadId: string;
  direction: MessageDirection;
  /** The provider's id (Resend `email_id`); unique per account. */
  providerMessageId: string;
  /** RFC 5322 `Message-ID` without angle brackets; `null` when unknown. */
  messageId: string | null;
  /** Message ids of `In-Reply-To` and `References`, without angle brackets. */
  inReplyTo: string[];
  references: string[];
  /** `From` as a display string, e.g. `Ann <ann@example.com>`. */
  from: string;
  /** Canonical address of `from`; `null` when it has none. */
  fromAddress: string | null;
  /** Canonical `Reply-To` address, when the sender gave one. */
  replyTo: string | null;
  to: string[];
  cc: string[];
  /** Canonical addresses of `to` and `cc` (threading strategy 2 looks here). */
  recipients: string[];
  subject: string;
  /** Normalized subject (see `normalizeSubject`). */
  subjectKey: string;
  text: string;
  /** HTML as received, never rendered at the host's origin. */
  html: string | null;
  status: MessageStatus;
  openedAt: Date | null;
  openCount: number;
  clickedAt: Date | null;
  clickCount: number;
  /** Lower-case keys of both ids (provider id and Message-ID), whole and by local part:
   *  threading strategy 1 matches `In-Reply-To`/`References` tokens against them. */
  threadKeys: string[];
  /** Received (inbound) or sent (outbound). */
  createdAt: Date;
  /** Set once attachments and notifications are done; until then a retried event resumes. */
  processedAt: Date | null;
}

/** One delivery or engagement fact to apply to a message. */
export type DeliveryUpdate =
  | { kind: 'status'; status: DeliveryStatus; at: Date }
  | { kind: 'opened'; at: Date }
  | { kind: 'clicked'; at: Date };

export interface InboxMessageStore {
  /** Inserts the message unless the account already holds its `providerMessageId` (unique per
   *  account, enforced atomically). Then nothing is written and the stored message comes back
   *  with `created: false`; concurrent inserts of one id: exactly one `created: true`. */
  insert(message: InboxMessage): Promise<{ message: InboxMessage; created: boolean }>;
  findById(id: string): Promise<InboxMessage | null>;
  findByProviderId(accountId: string, providerMessageId: string): Promise<InboxMessage | null>;
  /** Outbound messages of any account with this provider id (delivery events name no account). */
  listOutboundByProviderId(providerMessageId: string): Promise<InboxMessage[]>;
  /** The thread's messages oldest first, ordered by `createdAt`, then by arrival (insert
   *  order) for messages of one millisecond. "Newest" below is the reverse of this order. */
  listByThread(threadId: string): Promise<InboxMessage[]>;
  /** Threading strategy 1: the newest outbound message of the account whose `threadKeys`
   *  share at least one entry with `keys` (all lower case). */
  findOutboundByThreadKeys(accountId: string, keys: string[]): Promise<InboxMessage | null>;
  /** Threading strategies 2 and 3: the newest message of the account with this `subjectKey`
   *  created at or after `since`. With `outboundTo`, only outbound messages whose
   *  `recipients` include that canonical address. */
  findLatestBySubject(
    accountId: string,
    subjectKey: string,
    since: Date,
    opts?: { outboundTo?: string },
  ): Promise<InboxMessage | null>;
  /** Applies one update in one atomic step and returns the message (`null`: unknown id).
   *  status: replaced only by a status of higher `STATUS_RANK`; opened/clicked: the count goes up
   *  by one and `openedAt`/`clickedAt` keep the earliest time; the status never changes. */
  applyDelivery(id: string, update: DeliveryUpdate): Promise<InboxMessage | null>;
  /** Marks attachments and notifications done. */
  markProcessed(id: string, at: Date): Promise<void>;
}
