import { createHash, randomUUID } from 'node:crypto';
import type { GatehouseContext } from '../context.js';
import type { InboxMessage } from '../ports/inbox-message-store.js';
import type { AttachmentSource } from './inbound-mail.js';

/** File key of an attachment: derived from the message id and the source key, so a retried
 *  event overwrites its own file instead of leaving a second copy; no sender text in it. */
export function fileKeyFor(messageId: string, sourceKey: string): string {
  return createHash('sha256').update(`${messageId}\n${sourceKey}`).digest('hex').slice(0, 40);
}

/** Stores each attachment through the file port, best-effort: a failure is logged with the
 *  outbox event id and the rest go on. Attachments already stored (a retry) are skipped. */
export async function storeAttachments(
  ctx: GatehouseContext,
  maxBytes: number,
  message: InboxMessage,
  sources: AttachmentSource[],
  outboxEventId: string,
): Promise<void> {
  for (const [index, source] of sources.entries()) {
    const fields = { outboxEventId, messageId: message.id, attachment: index };
    try {
      if (await ctx.stores.inboxAttachments.findBySource(message.id, source.sourceKey)) continue;
      const bytes = await source.load();
      if (bytes === null) {
        ctx.logger.warn(
          { event: 'inbox_attachment_failed', ...fields, reason: 'not_found' },
          'attachment not stored',
        );
        continue;
      }
      if (bytes.byteLength > maxBytes) {
        ctx.logger.warn(
          { event: 'inbox_attachment_failed', ...fields, reason: 'too_large' },
          'attachment not stored',
        );
        continue;
      }
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
      ctx.logger.warn(
        { event: 'inbox_attachment_failed', ...fields, err: e instanceof Error ? e.message : String(e) },
        'attachment not stored',
      );
    }
  }
}
