import { randomUUID } from 'node:crypto';
import { type Consumer, type DeliveredEvent, RetryLater } from '../outbox/types.js';
import type { InboxAccount } from '../ports/inbox-account-store.js';
import type { InboxMessage } from '../ports/inbox-message-store.js';
import { createKeyedSerial } from '../util/keyed-serial.js';
import { activeRole } from './access.js';
import { type ParsedAddress, stripTag } from './addresses.js';
import { storeAttachments } from './attachments.js';
import type { InboxContext } from './deps.js';
import { type InboundMail, loadInboundMail, readEnvelope } from './inbound-mail.js';
import { MAIL_READER_PACKAGE, MailReaderMissing } from './load-mail-reader.js';
import { threadKeys } from './message-ids.js';
import { notifyMembers } from './notify.js';
import type { ResolvedInboxOptions } from './options.js';
import { acceptedAt, parsePayload } from './payload.js';
import { normalizeSubject } from './subject.js';
import { findThread } from './threading.js';

/** Attachments stored per message at most; the rest are logged (`inbox_attachments_dropped`). */
const MAX_ATTACHMENTS = 500;

/** The first account that owns one of the addresses, tried in order (`to`, then `cc`, then
 *  `received_for`/`bcc`), each as written and with `+tag` stripped. A sub-address belongs to its
 *  base's mailbox: an account for `sales+orders@` receives only while the user who created it
 *  owns the account of `sales@` (when there is one); otherwise its mail goes to `sales@`'s
 *  account, so nobody receives mail meant for another user's address by claiming a tag of it. */
export async function matchAccount(
  ctx: InboxContext,
  recipients: ParsedAddress[],
): Promise<InboxAccount | null> {
  const seen = new Set<string>();
  for (const r of recipients) {
    if (r.address === null || seen.has(r.address)) continue;
    seen.add(r.address);
    const exact = await ctx.stores.inboxAccounts.findByAddress(r.address);
    const baseAddress = stripTag(r.address);
    if (baseAddress === r.address) {
      if (exact) return exact;
      continue;
    }
    const base = await ctx.stores.inboxAccounts.findByAddress(baseAddress);
    if (exact && (!base || (await createdByOwnerOf(ctx, exact, base)))) return exact;
    if (base) return base;
  }
  return null;
}

/** True when the user who created `account` is an owner of `base` (a membership that counts). */
async function createdByOwnerOf(ctx: InboxContext, account: InboxAccount, base: InboxAccount) {
  const creator = (await ctx.stores.inboxAccounts.listMembers(account.id)).find((m) => m.addedBy === null);
  return creator !== undefined && (await activeRole(ctx, base.id, creator.userId)) === 'owner';
}

const recipientsOf = (m: { to: ParsedAddress[]; cc: ParsedAddress[]; otherRecipients: ParsedAddress[] }) => [
  ...m.to,
  ...m.cc,
  ...m.otherRecipients,
];

/** A message insert that found its provider id already stored (it lost a race). */
class AlreadyStored {
  constructor(readonly message: InboxMessage) {}
}

/** Threads and stores a new inbound message (thread created when none matches). Returns the
 *  stored message; `created: false` when another delivery stored it first. Mails with one
 *  normalized subject in one account are threaded one at a time (in this process by `serial`,
 *  across processes by the store's subject lock), so two arriving together share one thread.
 *  `now` is when the webhook was accepted, not when this delivery runs: mails keep the
 *  order they came in although deliveries run side by side, take their time at the provider,
 *  or are retried an hour later. */
async function storeInbound(
  ctx: InboxContext,
  opts: ResolvedInboxOptions,
  serial: ReturnType<typeof createKeyedSerial>,
  account: InboxAccount,
  mail: InboundMail,
  providerMessageId: string,
  now: Date,
): Promise<{ message: InboxMessage; created: boolean }> {
  const subjectKey = normalizeSubject(mail.subject);
  const sender = mail.from?.address ?? null;
  const message: InboxMessage = {
    id: randomUUID(),
    accountId: account.id,
    threadId: '',
    direction: 'inbound',
    providerMessageId,
    messageId: mail.messageId,
    inReplyTo: mail.inReplyTo,
    references: mail.references,
    from: mail.from?.display ?? '',
    fromAddress: sender,
    replyTo: mail.replyTo,
    to: mail.to.map((a) => a.display),
    cc: mail.cc.map((a) => a.display),
    recipients: [...mail.to, ...mail.cc].flatMap((a) => (a.address ? [a.address] : [])),
    subject: mail.subject,
    subjectKey,
    text: mail.text,
    html: mail.html,
    status: 'received',
    openedAt: null,
    openCount: 0,
    clickedAt: null,
    clickCount: 0,
    threadKeys: threadKeys([providerMessageId, mail.messageId]),
    createdAt: now,
    processedAt: null,
  };
  // An empty subject never matches a thread (threading.ts): nothing to serialise.
  const serialise = <T>(task: () => Promise<T>) =>
    subjectKey === '' ? task() : serial(`${account.id}\n${subjectKey}`, task);
  let newThreadId: string | null = null;
  try {
    return await serialise(() =>
      ctx.stores.transaction(async (tx) => {
        if (subjectKey !== '') await tx.inboxThreads.lockSubject(account.id, subjectKey);
        const match = await findThread(tx.inboxMessages, {
          accountId: account.id,
          inReplyTo: mail.inReplyTo,
          references: mail.references,
          subjectKey,
          sender,
          now,
          windowMs: opts.windowMs,
        });
        message.threadId = match?.threadId ?? randomUUID();
        if (!match) {
          newThreadId = message.threadId;
          await tx.inboxThreads.create({
            id: message.threadId,
            accountId: account.id,
            subject: mail.subject,
            subjectKey,
            createdAt: now,
            lastMessageAt: now,
            messageCount: 0,
          });
        }
        const r = await tx.inboxMessages.insert(message);
        if (!r.created) throw new AlreadyStored(r.message);
        await tx.inboxThreads.touch(message.threadId, now);
        return r;
      }),
    );
  } catch (e) {
    if (!(e instanceof AlreadyStored)) throw e;
    // Stores without rollback keep the new thread: remove it while it is empty.
    if (newThreadId !== null) await ctx.stores.inboxThreads.deleteIfEmpty(newThreadId);
    return { message: e.message, created: false };
  }
}

/** When attachment downloads stop (wall clock): after the budget, and at most half of what is
 *  left of the lease, so the notices after them go out before another worker may take the event. */
function downloadDeadline(budgetMs: number, leaseEndsAt: number | undefined): number {
  const now = Date.now();
  return Math.min(
    now + budgetMs,
    leaseEndsAt === undefined ? Number.POSITIVE_INFINITY : (now + leaseEndsAt) / 2,
  );
}

/** Consumer of `inbox.mail.webhook.inbound.received` (docs/inbox.md): account by recipient,
 *  de-duplication by provider id, threading, body from provider/payload/raw MIME, attachments
 *  best-effort, then one notification per owner/member. A download the provider failed (5xx,
 *  network) has the event retried after that, for the missing attachments only. A retried
 *  event resumes where the last attempt stopped and repeats nothing. Outcomes: `stored`,
 *  `resumed`, `duplicate`, `no_account`, `provider_not_found`, `invalid_payload`. */
export function createInboundConsumer(
  ctx: InboxContext,
  opts: ResolvedInboxOptions,
  outboxAttempts: number,
): Consumer {
  const serial = createKeyedSerial();
  /** A mail that will never be stored: said once in the log, so an operator can tell why an
   *  expected message is missing (the outcome alone sits on the outbox event). */
  const dropped = (
    event: DeliveredEvent,
    outcome: 'no_account' | 'provider_not_found' | 'invalid_payload',
  ) => {
    ctx.logger.info(
      { event: 'inbox_mail_dropped', outboxEventId: event.id, outcome },
      'inbound mail not stored',
    );
    return { outcome };
  };
  let toldMissing = false;
  /** The mail reader; without it every inbound mail is retried (and said once, at error level,
   *  what to install). Each outbox retry logs its own line. */
  const mailReader = async (event: DeliveredEvent) => {
    try {
      return await ctx.mailReader();
    } catch (e) {
      if (e instanceof MailReaderMissing && !toldMissing) {
        toldMissing = true;
        ctx.logger.error(
          { event: 'inbox_mail_reader_missing', outboxEventId: event.id, package: MAIL_READER_PACKAGE },
          e.message,
        );
      }
      throw e;
    }
  };
  return async (event: DeliveredEvent) => {
    // A host's own queue may pass its count; one that is no count at all is not trusted.
    const given = event.maxAttempts;
    const maxAttempts =
      given !== undefined && Number.isSafeInteger(given) && given >= 1 ? given : outboxAttempts;
    // Loaded before anything is read, so every inbound mail needs it alike (not only those
    // with raw MIME or HTML alone), and a missing package shows on the first mail.
    const reader = await mailReader(event);
    const body = parsePayload(event.payload);
    if (!body) return dropped(event, 'invalid_payload');
    const env = readEnvelope(body, reader);
    const named = recipientsOf(env);
    let account = await matchAccount(ctx, named);
    // The payload's recipients decide when it names any: no match finishes
    // here, without a provider call that could only turn it into provider_not_found or a retry.
    // Only a payload naming nobody is matched on the fetched mail's headers.
    if (!account && named.some((r) => r.address !== null)) return dropped(event, 'no_account');
    if (account && env.emailId) {
      // Known and finished: skip the provider fetch entirely.
      const known = await ctx.stores.inboxMessages.findByProviderId(account.id, env.emailId);
      if (known?.processedAt) return { outcome: 'duplicate' };
    }
    const mail = await loadInboundMail(env, ctx.provider, reader, {
      signal: event.signal,
      onParseError: (err) =>
        ctx.logger.warn(
          {
            event: 'inbox_mime_unparsed',
            outboxEventId: event.id,
            err: err instanceof Error ? err.message : 'error',
          },
          'raw MIME could not be parsed; stored without its body',
        ),
      onUnfetchable: (err) =>
        ctx.logger.warn(
          { event: 'inbox_provider_unfetchable', outboxEventId: event.id, err: err.message },
          'the provider cannot give this mail; stored from the webhook payload',
        ),
    });
    if (!mail) return dropped(event, 'provider_not_found');
    account ??= await matchAccount(ctx, recipientsOf(mail));
    if (!account) return dropped(event, 'no_account');

    const providerMessageId = mail.emailId ?? mail.messageId ?? `event:${event.id}`;
    const existing = await ctx.stores.inboxMessages.findByProviderId(account.id, providerMessageId);
    if (existing?.processedAt) return { outcome: 'duplicate' };
    const { message, created } = existing
      ? { message: existing, created: false }
      : await storeInbound(ctx, opts, serial, account, mail, providerMessageId, acceptedAt(event, ctx.clock));
    if (message.processedAt) return { outcome: 'duplicate' };

    if (created && mail.attachments.length > MAX_ATTACHMENTS) {
      ctx.logger.warn(
        {
          event: 'inbox_attachments_dropped',
          outboxEventId: event.id,
          messageId: message.id,
          kept: MAX_ATTACHMENTS,
          dropped: mail.attachments.length - MAX_ATTACHMENTS,
        },
        'attachments over the per-message cap not stored',
      );
    }
    const { pending } = await storeAttachments(
      ctx,
      {
        maxBytes: opts.maxAttachmentBytes,
        deadline: downloadDeadline(opts.attachmentBudgetMs, event.leaseEndsAt),
        signal: event.signal,
        attempt: event.attempt,
        maxAttempts,
      },
      message,
      mail.attachments.slice(0, MAX_ATTACHMENTS),
      event.id,
    );
    const notified = await notifyMembers(ctx, {
      leaseMs: opts.notificationLeaseMs,
      account,
      message,
      outboxEventId: event.id,
      signal: event.signal,
    });
    if (notified.heldUntil) throw new RetryLater('notification held by another delivery', notified.heldUntil);
    if (notified.failed) throw new Error('notification failed');
    // Not finished (marked processed) while another event's send may yet fail: its retry would
    // then find the message processed and never send. Back on the quick backoff: that holder
    // was waited for briefly already and usually finishes in moments. A send of its that hangs
    // can keep the notice for its whole lease, longer than the backoff of all attempts: the last
    // two wait that lease out rather than go dead while the holder may yet fail.
    if (notified.heldElsewhere) {
      const held = 'notification held by another event';
      if (event.attempt < maxAttempts - 2) throw new Error(held);
      throw new RetryLater(held, new Date(ctx.clock.now().getTime() + opts.notificationLeaseMs));
    }
    // The message is readable and its members told; the retry fetches only what is missing.
    if (pending > 0) throw new Error(`${pending} attachment download(s) failed or deferred; retried`);
    await ctx.stores.inboxMessages.markProcessed(message.id, ctx.clock.now());
    // `resumed`: another delivery (a retry, or a duplicate webhook side by side) stored it first.
    const outcome = created ? 'stored' : 'resumed';
    ctx.logger.info(
      {
        event: 'inbox_message_stored',
        outcome,
        outboxEventId: event.id,
        messageId: message.id,
        source: mail.source,
      },
      created ? 'inbound message stored' : 'inbound message finished (stored by an earlier delivery)',
    );
    return { outcome };
  };
}
