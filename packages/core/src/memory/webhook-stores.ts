import type { WebhookStores } from '../ports/webhook-stores.js';
import type { MemoryStoresOptions } from './options.js';
import { memoryOutboxStore } from './outbox-store.js';

export function memoryWebhookStores(opts: Required<MemoryStoresOptions>): WebhookStores {
  return { outbox: memoryOutboxStore({ maxFinished: opts.maxFinishedEvents, logger: opts.logger }) };
}
