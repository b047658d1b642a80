import type { OutboxStore } from './outbox-store.js';

/** The webhook area's storage ports (one port per file beside this one).
 *  Webhook receipts (`webhook-id`, `x-mail-*` replay hashes) are the outbox's dedupe keys:
 *  one insert per accepted webhook (docs/decisions/0301-webhook-receipts-in-outbox.md). */
export type WebhookStores = {
  outbox: OutboxStore;
};
