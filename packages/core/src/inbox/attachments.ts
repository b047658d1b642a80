import { createHash, randomUUID } from 'node:crypto';
import type { InboxMessage } from '../ports/inbox-message-store.js';
import { errorMessage } from '../util/error-message.js';
import type { InboxContext } from './deps.js';
import type { AttachmentSource } from './inbound-mail.js';
import { ProviderError } from './provider-client.js';

/** File key of an attachment: derived from the message id and the source key, so a retried
 *  event overwrites its own file instead of leaving a second copy; no sender text in it. */
export function fileKeyFor(messageId: string, sourceKey: string): string {
  return createHash('sha256').update(`${messageId}\n${sourceKey}`).digest('hex').slice(0, 40);
}

/** A download that would fail the same way again (too large, no usable link). */
const permanent = (e: unknown) => e instanceof ProviderError && e.permanent;

/** Indices of `count` attachments in the order this attempt tries them. The first attempt
 *  takes the mail's order; each retry starts a share of the list further on (a tenth with 10
 *  attempts), so attachments behind some that hang until the budget runs out, attempt after
 *  attempt, still get their turn before the event runs out of attempts. */
function downloadOrder(count: number, attempt: number, maxAttempts: number): number[] {
  const start = count === 0 || attempt <= 1 ? 0 : ((attempt - 1) * Math.ceil(count / maxAttempts)) % count;
  return Array.from({ length: count }, (_, i) => (start + i) % count);
}

/** Stores each attachment through the file port, best-effort: a failure is logged with the
 *  outbox event id and the rest go on. Attachments already stored (a retry) are skipped.
 *  Returns how many could not be downloaded for now (provider 5xx, network, any failure but a
 *  permanent one): the caller has the event retried for them (as the message
 *  fetch is). A failed store through the file port is not retried. Once `deadline` (wall-clock
 *  ms) has passed, or the dispatcher stops (`signal`), the downloads not yet started are left to
 *  that retry too, so each delivery makes progress within its lease; a stop also cuts short the
 *  download in progress. */
export async function storeAttachments(
  ctx: InboxContext,
  limits: { maxBytes: number; deadline: number; signal?: AbortSignal; attempt: number; maxAttempts: number },
  message: InboxMessage,
  sources: AttachmentSource[],
  outboxEventId: string,
): Promise<{ pending: number }> {
  // Wall time, not the injected clock: the deadline is about how long a worker is held.
  const { maxBytes, signal, deadline } = limits;
  let pending = 0;
  let deferred = 0;
  for (const index of downloadOrder(sources.length, limits.attempt, limits.maxAttempts)) {
    const source = sources[index]!;
    const fields = { outboxEventId, messageId: message.id, attachment: index };
    const skip = (reason: Record<string, unknown>) =>
      ctx.logger.warn({ event: 'inbox_attachment_failed', ...fields, ...reason }, 'attachment not stored');
    let bytes: Uint8Array | null;
    try {
      if (await ctx.stores.inboxAttachments.findBySource(message.id, source.sourceKey)) continue;
      if (Date.now() >= deadline || signal?.aborted) {
        deferred++;
        continue;
      }
      bytes = await source.load(signal);
    } catch (e) {
      const later = !permanent(e);
      if (later) pending++;
      skip({ err: errorMessage(e), retry: later });
      continue;
    }
    if (bytes === null) {
      skip({ reason: 'not_found' });
      continue;
    }
    if (bytes.byteLength > maxBytes) {
      skip({ reason: 'too_large' });
      continue;
    }
    try {
      const fileKey = fileKeyFor(message.id, source.sourceKey);
      await ctx.files.put(fileKey, bytes, { contentType: source.contentType });
      await ctx.stores.inboxAttachments.insert({
        id: randomUUID(),
        accountId: message.accountId,
        messageId: message.id,
        sourceKey: source.sourceKey,
        filename: source.filename,
        contentType: source.contentType,
        size: bytes.byteLength,
        contentId: source.contentId,
        inline: source.inline,
        fileKey,
        createdAt: ctx.clock.now(),
      });
    } catch (e) {
      skip({ err: errorMessage(e) });
    }
  }
  if (deferred > 0)
    ctx.logger.info(
      { event: 'inbox_attachments_deferred', outboxEventId, messageId: message.id, deferred },
      'attachment downloads left to a retry of the event',
    );
  return { pending: pending + deferred };
}
