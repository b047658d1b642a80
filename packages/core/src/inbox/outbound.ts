import { randomUUID } from 'node:crypto';
import { PosternError } from '../errors.js';
import type { InboxAccount } from '../ports/inbox-account-store.js';
import type { DeliveryStatus, InboxMessage } from '../ports/inbox-message-store.js';
import type { InboxThread } from '../ports/inbox-thread-store.js';
import { errorMessage } from '../util/error-message.js';
import { headerSafe, outgoingHeaderText, parseAddresses } from './addresses.js';
import { applyPendingEvents } from './delivery-consumer.js';
import type { InboxContext } from './deps.js';
import { bareId, isSendableId, parseIdList, referencesValue, threadKeys } from './message-ids.js';
import { MAX_SUBJECT, normalizeSubject } from './subject.js';

/** A message the host sent itself (`ph.inbox.recordOutbound`), so replies thread onto it and
 *  delivery events update it. */
export interface RecordOutboundInput {
  accountId: string;
  /** Continue this thread (it must belong to the account); absent: a new thread. */
  threadId?: string;
  /** The provider's id for the sent email (Resend's `id`). */
  providerMessageId: string;
  /** The RFC 5322 `Message-ID` it was sent with. */
  messageId?: string | null;
  inReplyTo?: string | string[];
  references?: string | string[];
  /** Default: the account's address. */
  from?: string;
  to: string | string[];
  cc?: string | string[];
  subject: string;
  text?: string;
  html?: string | null;
  /** Default: now. */
  sentAt?: Date;
  /** Default `queued` (accepted by the provider, no event yet). */
  status?: DeliveryStatus;
}

/** Stores an outbound message (idempotent per provider id and account), counts it on its
 *  thread and applies delivery events that arrived before it. */
export async function storeOutbound(
  ctx: InboxContext,
  account: InboxAccount,
  thread: InboxThread | null,
  input: Omit<RecordOutboundInput, 'accountId' | 'threadId'>,
): Promise<InboxMessage> {
  const providerMessageId = input.providerMessageId.trim();
  const existing = await ctx.stores.inboxMessages.findByProviderId(account.id, providerMessageId);
  if (existing) return existing;
  const now = input.sentAt ?? ctx.clock.now();
  const subject = headerSafe(input.subject, MAX_SUBJECT);
  const subjectKey = normalizeSubject(subject);
  const to = parseAddresses(input.to);
  const cc = parseAddresses(input.cc ?? []);
  const messageId = input.messageId ? bareId(input.messageId) : null;
  const threadId = thread?.id ?? randomUUID();
  const html = input.html ?? null;
  const message: InboxMessage = {
    id: randomUUID(),
    accountId: account.id,
    threadId,
    direction: 'outbound',
    providerMessageId,
    messageId,
    inReplyTo: parseIdList(input.inReplyTo ?? []),
    references: parseIdList(input.references ?? []),
    from: headerSafe(input.from ?? account.address, 500),
    fromAddress: parseAddresses(input.from ?? account.address)[0]?.address ?? null,
    replyTo: null,
    to: to.map((a) => a.display),
    cc: cc.map((a) => a.display),
    recipients: [...to, ...cc].flatMap((a) => (a.address ? [a.address] : [])),
    subject,
    subjectKey,
    text: input.text ?? '',
    html,
    status: input.status ?? 'queued',
    openedAt: null,
    openCount: 0,
    clickedAt: null,
    clickCount: 0,
    threadKeys: threadKeys([providerMessageId, messageId]),
    createdAt: now,
    processedAt: now,
  };
  const stored = await ctx.stores.transaction(async (tx) => {
    if (!thread) {
      await tx.inboxThreads.create({
        id: threadId,
        accountId: account.id,
        subject,
        subjectKey,
        createdAt: now,
        lastMessageAt: now,
        messageCount: 0,
      });
    }
    const r = await tx.inboxMessages.insert(message);
    if (r.created) await tx.inboxThreads.touch(threadId, now);
    return r;
  });
  if (!stored.created) {
    if (!thread) await ctx.stores.inboxThreads.deleteIfEmpty(threadId);
    return stored.message;
  }
  await applyPendingEvents(ctx, stored.message);
  return (await ctx.stores.inboxMessages.findById(stored.message.id)) ?? stored.message;
}

/** `Name <address>` with the name quoted and free of CR/LF. */
function mailbox(name: string, address: string): string {
  const n = outgoingHeaderText(name, 200).replace(/["\\]/g, '');
  return n ? `"${n}" <${address}>` : address;
}

/** Host part usable in a generated Message-ID. */
function idDomain(address: string): string {
  const d = address.slice(address.lastIndexOf('@') + 1);
  return /^[a-z0-9.-]{1,253}$/.test(d) ? d : 'postern.invalid';
}

/** Replies on a thread: to the newest inbound message's Reply-To or sender (else to whom the
 *  newest outbound message went), with a Postern Message-ID, In-Reply-To and References;
 *  sent through the provider port, or the mailer when no provider is configured. */
export async function sendReply(
  ctx: InboxContext,
  account: InboxAccount,
  thread: InboxThread,
  input: { text: string; html?: string },
): Promise<InboxMessage> {
  const messages = await ctx.stores.inboxMessages.listByThread(thread.id);
  const inbound = messages.filter((m) => m.direction === 'inbound').at(-1);
  const parent = inbound ?? messages.at(-1);
  const to = inbound
    ? [inbound.replyTo ?? inbound.fromAddress].filter((a): a is string => !!a)
    : (parent?.recipients ?? []);
  if (!parent || to.length === 0) {
    throw new PosternError('validation_failed', {
      errors: [{ path: '/', message: 'the thread has no address to reply to' }],
    });
  }
  const base = outgoingHeaderText(parent.subject || thread.subject, MAX_SUBJECT - 4);
  const subject = /^re\s*:/i.test(base) ? base : `Re: ${base}`;
  const messageId = `${randomUUID()}@${idDomain(account.address)}`;
  // RFC 5322 3.6.4: the parent's References, or else its In-Reply-To when that names one id,
  // then the parent's own Message-ID. A parent that came without a Message-ID leaves the thread
  // headers to the newest message that has one, so the reply still threads for the recipient.
  // Only ids a mail header can carry as they are: an inbound id with 8-bit or odd characters
  // (`<ü-id@x>`, a direction override) is kept for threading here but never sent on.
  const cited = isSendableId(parent.messageId)
    ? parent
    : (messages.findLast((m) => isSendableId(m.messageId)) ?? parent);
  const ancestryOf = (m: InboxMessage) =>
    (m.references.length > 0 ? m.references : m.inReplyTo.length === 1 ? m.inReplyTo : []).filter(
      isSendableId,
    );
  const ancestry = ancestryOf(parent).length > 0 ? ancestryOf(parent) : ancestryOf(cited);
  const citedId = isSendableId(cited.messageId) ? cited.messageId : null;
  // Every value below is whole ids of printable ASCII: nothing to strip, nothing cut in two.
  const headers: Record<string, string> = { 'Message-ID': `<${messageId}>` };
  if (citedId) headers['In-Reply-To'] = `<${citedId}>`;
  const references = referencesValue([...ancestry, ...(citedId ? [citedId] : [])]);
  if (references) headers.References = references;
  const from = mailbox(account.name, account.address);

  let providerMessageId: string;
  try {
    if (ctx.provider) {
      ({ id: providerMessageId } = await ctx.provider.send({
        from,
        to,
        subject,
        text: input.text,
        ...(input.html === undefined ? {} : { html: input.html }),
        headers,
      }));
    } else {
      await ctx.mailer.send({
        from,
        to: to.join(', '),
        subject,
        text: input.text,
        ...(input.html === undefined ? {} : { html: input.html }),
        headers,
      });
      providerMessageId = messageId;
    }
  } catch (e) {
    ctx.logger.warn(
      { event: 'inbox_reply_failed', threadId: thread.id, err: errorMessage(e) },
      'reply not sent',
    );
    throw new PosternError('unavailable', {
      retryAfter: 30,
      detail: 'the mail provider did not accept the reply',
    });
  }
  return storeOutbound(ctx, account, thread, {
    providerMessageId,
    messageId,
    inReplyTo: cited.messageId ?? [],
    references,
    from,
    to,
    subject,
    text: input.text,
    html: input.html ?? null,
  });
}
