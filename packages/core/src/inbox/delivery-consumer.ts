import type { PosternContext } from '../context.js';
import type { Consumer } from '../outbox/types.js';
import type { DeliveryStatus, DeliveryUpdate, InboxMessage } from '../ports/inbox-message-store.js';
import type { MailEvent, MailEventKind } from '../ports/mail-event-store.js';
import { acceptedAt, parsePayload, storableDate } from './payload.js';

/** Event type (without `email.`) -> what it does (docs/inbox.md, Delivery events). */
const TYPES = new Map<string, { kind: MailEventKind; status: DeliveryStatus | null }>([
  ['sent', { kind: 'status', status: 'sent' }],
  ['delivered', { kind: 'status', status: 'delivered' }],
  ['delivery_delayed', { kind: 'status', status: 'delayed' }],
  ['bounced', { kind: 'status', status: 'bounced' }],
  ['complained', { kind: 'status', status: 'complained' }],
  ['failed', { kind: 'status', status: 'failed' }],
  ['opened', { kind: 'opened', status: null }],
  ['clicked', { kind: 'clicked', status: null }],
]);

const MAX_TYPE = 64;
const MAX_DETAIL = 500;

function classify(type: string): { kind: MailEventKind; status: DeliveryStatus | null } {
  const bare = type.toLowerCase().replace(/^email\./, '');
  return TYPES.get(bare) ?? { kind: 'other', status: null };
}

const date = (v: unknown): Date | null => (typeof v === 'string' && v.length <= 64 ? storableDate(v) : null);

const text = (v: unknown, max: number) => (typeof v === 'string' && v ? v.slice(0, max) : null);
const field = (o: unknown, k: string): unknown =>
  typeof o === 'object' && o !== null && Object.hasOwn(o, k) ? (o as Record<string, unknown>)[k] : undefined;

function updateOf(e: MailEvent): DeliveryUpdate | null {
  if (e.kind === 'status' && e.status) return { kind: 'status', status: e.status, at: e.occurredAt };
  if (e.kind === 'opened' || e.kind === 'clicked') return { kind: e.kind, at: e.occurredAt };
  return null;
}

/** Applies one stored mail event to its message(s), once: the event is marked applied in the
 *  same transaction as the update, and only the caller that marks it applies it. */
export async function applyMailEvent(
  ctx: PosternContext,
  event: MailEvent,
  messages: InboxMessage[],
): Promise<boolean> {
  const update = updateOf(event);
  return ctx.stores.transaction(async (tx) => {
    if (!(await tx.mailEvents.markApplied(event.id, ctx.clock.now()))) return false;
    if (update) for (const m of messages) await tx.inboxMessages.applyDelivery(m.id, update);
    return true;
  });
}

/** Applies events that arrived before their message (called right after an outbound message
 *  is stored: `recordOutbound`, replies). */
export async function applyPendingEvents(ctx: PosternContext, message: InboxMessage): Promise<void> {
  for (const e of await ctx.stores.mailEvents.listPending(message.providerMessageId)) {
    await applyMailEvent(ctx, e, [message]);
  }
}

/** Consumer of `inbox.mail.webhook.event.received`: stores every event as a `mail_event`,
 *  then applies it to the outbound message it names (`data.email_id`). Statuses only move
 *  forward; opened/clicked count engagement. Unknown message: kept pending. Outcomes:
 *  `applied`, `pending`, `duplicate`, `ignored` (no effect for that type), `invalid_payload`
 *  (no usable message id: stored for audit, applied to nothing). */
export function createDeliveryConsumer(ctx: PosternContext): Consumer {
  return async (delivered) => {
    const body = parsePayload(delivered.payload);
    const data = field(body, 'data') ?? body;
    const named =
      text(field(data, 'email_id'), 300) ??
      text(field(body, 'email_id'), 300) ??
      text(field(data, 'id'), 300);
    const providerMessageId = named && named.length <= 256 ? named : null;
    const type = text(field(body, 'type'), MAX_TYPE) ?? text(field(body, 'event'), MAX_TYPE) ?? 'unknown';
    const { kind, status } = classify(type);
    const now = ctx.clock.now();
    // Recorded on its own (not in the transaction below): a message stored meanwhile then
    // finds this event pending, or this consumer finds the message. Either way it applies.
    // An event that names no message, or has no effect, is stored as applied: nothing waits.
    const { event } = await ctx.stores.mailEvents.record({
      id: delivered.id,
      type,
      kind,
      status,
      providerMessageId,
      occurredAt:
        date(field(body, 'created_at')) ??
        date(field(data, 'created_at')) ??
        acceptedAt(delivered, ctx.clock),
      recordedAt: now,
      detail:
        text(field(field(data, 'bounce'), 'message'), MAX_DETAIL) ??
        text(field(field(data, 'failed'), 'reason'), MAX_DETAIL),
      appliedAt: kind === 'other' || providerMessageId === null ? now : null,
    });
    if (providerMessageId === null) {
      ctx.logger.warn(
        { event: 'inbox_event_invalid', outboxEventId: delivered.id },
        'delivery event without a message id: stored, applied to nothing',
      );
      return { outcome: 'invalid_payload' };
    }
    if (kind === 'other') return { outcome: 'ignored' };
    if (event.appliedAt !== null) return { outcome: 'duplicate' };
    const messages = await ctx.stores.inboxMessages.listOutboundByProviderId(providerMessageId);
    if (messages.length === 0) return { outcome: 'pending' };
    return { outcome: (await applyMailEvent(ctx, event, messages)) ? 'applied' : 'duplicate' };
  };
}
