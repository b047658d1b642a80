import type { PosternContext } from '../context.js';
import type { RouteDef } from '../http/types.js';
import { memoryFiles } from '../memory/files.js';
import { createOutbox } from '../outbox/index.js';
import { EVENT_RECEIVED, INBOUND_RECEIVED } from '../outbox/types.js';
import { createWebhookRoutes } from '../webhook/index.js';
import { createInboxApi } from './api.js';
import { createDeliveryConsumer } from './delivery-consumer.js';
import { createInboundConsumer } from './inbound-consumer.js';
import { mailNotifier } from './notify.js';
import { resolveInboxOptions, resolveProvider } from './options.js';
import { createInboxRoutes } from './routes.js';

/** The inbox area: webhook intake, the outbox, its consumers and the inbox API. */
export function createInboxArea(ctx: PosternContext) {
  const opts = resolveInboxOptions(ctx.options.inbox);
  ctx.provider = resolveProvider(ctx.options.provider, { ...opts, logger: ctx.logger });
  ctx.files = ctx.options.files ?? memoryFiles();
  ctx.notifier = ctx.options.notifier ?? mailNotifier(ctx.mailer);

  const outbox = createOutbox(ctx);
  const consumers = {
    /** `inbox.mail.webhook.event.received`: delivery/engagement events. */
    delivery: createDeliveryConsumer(ctx),
    /** `inbox.mail.webhook.inbound.received`: inbound emails. */
    inbound: createInboundConsumer(ctx, opts),
  };
  outbox.subscribe(EVENT_RECEIVED, consumers.delivery);
  outbox.subscribe(INBOUND_RECEIVED, consumers.inbound);

  const api = { ...createInboxApi(ctx, opts), consumers };
  const routes: RouteDef[] = [...createWebhookRoutes(ctx, outbox), ...createInboxRoutes(api)];
  return { api, routes, outbox };
}
