import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { InboxAccount, InboxMembership } from '../ports/inbox-account-store.js';
import type { InboxMessage } from '../ports/inbox-message-store.js';
import type { Mailer } from '../ports/mailer.js';
import type { Notifier } from '../ports/notifier.js';
import { errorMessage } from '../util/error-message.js';
import { membershipCounts } from './access.js';
import { headerSafe, outgoingHeaderText } from './addresses.js';
import type { InboxContext } from './deps.js';

/** A notifier that mails each owner/member "New message in <account name>: <subject>"
 *  through the mailer (the examples' notifier, and the default). Stranger-supplied parts are
 *  stripped of CR/LF; the body holds no link and no message content. */
export function mailNotifier(mailer: Mailer, opts: { from?: string } = {}): Notifier {
  return {
    async notify(n) {
      const subject = outgoingHeaderText(
        `New message in ${headerSafe(n.accountName, 200)}: ${headerSafe(n.subject, 300)}`,
      );
      await mailer.send({
        to: n.email,
        ...(opts.from ? { from: opts.from } : {}),
        subject,
        text: [
          `New message in ${headerSafe(n.accountName, 200)} <${n.accountAddress}>.`,
          `From: ${headerSafe(n.from, 300)}`,
          `Subject: ${headerSafe(n.subject, 300)}`,
          '',
          'Sign in to read it.',
        ].join('\n'),
        headers: {
          // Lets a catching mail system drop duplicates if a retry ever resends.
          'X-Postern-Notification': createHash('sha256')
            .update(`${n.messageId}:${n.userId}`)
            .digest('hex')
            .slice(0, 32),
        },
      });
    },
  };
}

/** What `notifyMembers` left undone: `failed` when a notification failed (released, so a retry
 *  of the event sends it); `heldUntil` when an earlier delivery of the same event still holds
 *  one (its send may yet fail), and until when that claim's lease can run at the latest;
 *  `heldElsewhere` when another event (a duplicate webhook of the mail) still holds one after
 *  the short wait for it. */
export interface NotifyResult {
  failed: boolean;
  heldUntil: Date | null;
  heldElsewhere: boolean;
}

/** Pauses before claiming again what another event holds (about 1.5 s in all). Duplicate
 *  webhooks of one mail are usually delivered side by side, and each claims some members'
 *  notices first: waiting for the other's sends, after making our own, finishes both without a
 *  retry. A holder still busy after that (a hanging send), or a wait cut short by `stop()`, is
 *  left to the outbox's backoff. */
const HELD_ELSEWHERE_WAITS_MS = [50, 100, 200, 400, 800];

/** Notifies every owner/member of the account once about `message` (idempotency key
 *  `${messageId}:${userId}` claimed in the notification store). */
export async function notifyMembers(
  ctx: InboxContext,
  delivery: {
    /** How long a claimed notice stays this delivery's. */
    leaseMs: number;
    account: InboxAccount;
    message: InboxMessage;
    outboxEventId: string;
    /** Aborted when the outbox stops: waits for notices held elsewhere end at once. */
    signal?: AbortSignal;
  },
): Promise<NotifyResult> {
  const { leaseMs, account, message, outboxEventId, signal } = delivery;
  const result: NotifyResult = { failed: false, heldUntil: null, heldElsewhere: false };
  /** Claims and sends one notice; false when another event holds it. */
  const notifyOne = async ({ userId, addedBy }: InboxMembership): Promise<boolean> => {
    const key = `${message.id}:${userId}`;
    const now = ctx.clock.now();
    const claim = await ctx.stores.inboxNotifications.claim(
      key,
      now,
      new Date(now.getTime() + leaseMs),
      outboxEventId,
    );
    if (claim === 'completed') return true;
    if (claim !== 'claimed') {
      // Held by another event (a duplicate webhook of this mail), or by an earlier delivery of
      // this very event whose outbox lease ran out first (say on a hanging SMTP call): either
      // send may yet fail. The earlier delivery is fenced off from retrying, so this event must
      // come back once that claim is sent, released or run out.
      if (claim.heldBy !== outboxEventId) return false;
      result.heldUntil = new Date(now.getTime() + leaseMs);
      ctx.logger.info(
        { event: 'inbox_notify_held', outboxEventId, messageId: message.id, userId },
        'notification being sent by an earlier delivery of this event; the event will be retried',
      );
      return true;
    }
    try {
      const user = await ctx.stores.users.findById(userId);
      // A member waiting for a proven address is not told what arrived (the subject is mail).
      if (user && !user.disabled && membershipCounts({ addedBy }, user)) {
        await ctx.notifier.notify(
          {
            userId: user.id,
            email: user.email,
            accountId: account.id,
            accountName: account.name,
            accountAddress: account.address,
            threadId: message.threadId,
            messageId: message.id,
            from: message.from,
            subject: message.subject,
          },
          key,
        );
      }
      await ctx.stores.inboxNotifications.complete(key, ctx.clock.now());
    } catch (e) {
      result.failed = true;
      await ctx.stores.inboxNotifications.release(key).catch(() => {});
      ctx.logger.warn(
        { event: 'inbox_notify_failed', outboxEventId, messageId: message.id, userId, err: errorMessage(e) },
        'notification failed; the event will be retried',
      );
    }
    return true;
  };

  let held: InboxMembership[] = [];
  for (const member of await ctx.stores.inboxAccounts.listMembers(account.id)) {
    if (!(await notifyOne(member))) held.push(member);
  }
  for (const ms of HELD_ELSEWHERE_WAITS_MS) {
    // Retried anyway (a failed send, a notice of our own earlier delivery): no wait is worth it.
    if (held.length === 0 || result.failed || result.heldUntil) break;
    // A stopping dispatcher does not wait: the held notices are left to the retry.
    await sleep(ms, undefined, { signal }).catch(() => {});
    if (signal?.aborted) break;
    const still: InboxMembership[] = [];
    for (const member of held) if (!(await notifyOne(member))) still.push(member);
    held = still;
  }
  result.heldElsewhere = held.length > 0;
  return result;
}
