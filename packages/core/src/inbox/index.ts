import type { PosternContext } from '../context.js';
import { memoryFiles } from '../memory/files.js';
import { purgeInBatches } from '../outbox/index.js';
import { type Consumer, EVENT_RECEIVED, INBOUND_RECEIVED } from '../outbox/types.js';
import { createInboxApi } from './api.js';
import type { InboxApi } from './api-types.js';
import { createDeliveryConsumer } from './delivery-consumer.js';
import type { InboxContext } from './deps.js';
import { createInboundConsumer } from './inbound-consumer.js';
import { loadMailReader } from './load-mail-reader.js';
import type { MailReaderLoader } from './mail-reader.js';
import { mailNotifier } from './notify.js';
import { resolveInboxOptions, resolveProvider } from './options.js';
import { createInboxRoutes } from './routes.js';

/** What the inbox area is built from: the shared context, the attempts the outbox makes at
 *  each event (a consumer tells its last attempt by them when the queue does not say), and how
 *  to get the mail reader (by default the installed `@postern/inbox`, imported on first use). */
export interface InboxAreaDeps {
  ctx: PosternContext;
  deliveryAttempts: number;
  mailReader?: MailReaderLoader;
}

/** The inbox area: its consumers of webhook events, the inbox API and routes. It returns
 *  what the outbox is to run for it (consumers by event name, a retention task); the outbox
 *  and the webhook intake are built by `createPostern`. */
export function createInboxArea({
  ctx: shared,
  deliveryAttempts,
  mailReader = loadMailReader,
}: InboxAreaDeps) {
  const opts = resolveInboxOptions(shared.options.inbox);
  const ctx: InboxContext = {
    ...shared,
    provider: resolveProvider(shared.options.provider, { ...opts, logger: shared.logger }),
    files: shared.options.files ?? memoryFiles(),
    notifier: shared.options.notifier ?? mailNotifier(shared.mailer),
    mailReader,
  };

  // Delivery events are purged with the outbox's done events, by the same workers.
  const purgeMailEvents = () => {
    const now = ctx.clock.now().getTime();
    const cut = {
      unmatchedBefore: new Date(now - opts.unmatchedEventRetentionMs),
      appliedBefore: new Date(now - opts.mailEventRetentionMs),
    };
    return purgeInBatches((limit) => ctx.stores.mailEvents.purge(cut, limit));
  };
  const consumers = {
    /** `inbox.mail.webhook.event.received`: delivery/engagement events. */
    delivery: createDeliveryConsumer(ctx),
    /** `inbox.mail.webhook.inbound.received`: inbound emails. */
    inbound: createInboundConsumer(ctx, opts, deliveryAttempts),
  };
  const subscriptions: Array<readonly [string, Consumer]> = [
    [EVENT_RECEIVED, consumers.delivery],
    [INBOUND_RECEIVED, consumers.inbound],
  ];

  const api: InboxApi = { ...createInboxApi(ctx, opts), consumers };
  const routes = createInboxRoutes(api);
  return {
    api,
    routes,
    /** The outbox consumers to subscribe, by event name. */
    subscriptions,
    /** Retention tasks for the outbox's workers. */
    retention: [purgeMailEvents],
  };
}
