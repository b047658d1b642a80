import type { KeyObject } from 'node:crypto';
import { z } from 'zod';
import type { PosternContext } from '../context.js';
import { ConfigError, isPosternError, PosternError } from '../errors.js';
import { parseUtf8Json } from '../http/body.js';
import type { RouteContext, RouteDef, RouteTable } from '../http/types.js';
import type { Outbox, PublishInput } from '../outbox/index.js';
import { integerOption } from '../util/integer-option.js';
import { eventNameOf, routeWebhook } from './routing.js';
import { createSecretReader } from './secrets.js';
import { checkSignature } from './signature.js';
import type { WebhookKind, WebhookOptions } from './types.js';

const DEFAULT_TOLERANCE_SECONDS = 300;
const DEFAULT_PREFIXES = ['webhook', 'svix'];
const PREFIX = /^[a-z0-9][a-z0-9-]{0,30}$/;

const acknowledgement = z.strictObject({ accepted: z.literal(true), outboxEventId: z.string() });

function resolveOptions(o: WebhookOptions = {}) {
  const toleranceSeconds = integerOption(
    'webhook.toleranceSeconds',
    o.toleranceSeconds,
    DEFAULT_TOLERANCE_SECONDS,
    0,
  );
  const prefixes = o.headerPrefixes ?? DEFAULT_PREFIXES;
  if (prefixes.length === 0 || !prefixes.every((p) => PREFIX.test(p))) {
    throw new ConfigError('webhook.headerPrefixes must be lower-case header name prefixes, e.g. "webhook"');
  }
  return { toleranceSeconds, prefixes: [...prefixes] };
}

/** Parses a verified body: a JSON object, or 400. Returns the text too (the outbox payload). */
function parseObject(raw: Uint8Array): { text: string; body: object } {
  // Strict UTF-8, BOM kept: the outbox payload is exactly the bytes that were signed.
  const { text, value: body } = parseUtf8Json(raw);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new PosternError('validation_failed', {
      errors: [{ path: '/', message: 'Expected a JSON object' }],
    });
  }
  return { text, body };
}

/** Webhook intake: signed routes that publish the raw body to the outbox. Order of work
 *  (docs/webhooks.md): body read under the limit (neutral layer) -> secret configured (503) ->
 *  signature over the raw bytes (401) -> nesting depth, then JSON object (400) -> route ->
 *  publish -> 202. An
 *  unverified body is never parsed or logged; nothing is published for a refused request. */
export function createWebhookRoutes(ctx: PosternContext, outbox: Outbox): RouteTable {
  const { toleranceSeconds, prefixes } = resolveOptions(ctx.options.webhook);
  const secrets = createSecretReader(ctx);

  const rejected = (r: RouteContext, reason: string) =>
    ctx.logger.warn(
      {
        event: 'webhook_rejected',
        outcome: 'failure',
        reason,
        // The standard fields of every security event; a webhook has no user or session.
        userId: null,
        sid: null,
        route: r.route,
        requestId: r.requestId,
        ip: r.ip,
      },
      'webhook rejected',
    );

  type Acknowledgement = { status: number; body: z.infer<typeof acknowledgement> };

  /** Everything before the publish, synchronously: secret, signature, JSON object, route. */
  const verified = (kind: WebhookKind | 'auto', r: RouteContext, keys: KeyObject[]) => {
    if (keys.length === 0) {
      rejected(r, 'not_configured');
      throw new PosternError('webhook_not_configured');
    }
    const check = checkSignature({
      headers: r.headers,
      rawBody: r.rawBody,
      keys,
      nowSeconds: Math.floor(ctx.clock.now().getTime() / 1000),
      toleranceSeconds,
      prefixes,
    });
    if (!check.ok) {
      rejected(r, check.reason);
      throw new PosternError('webhook_signature_invalid');
    }
    let parsed: { text: string; body: object };
    try {
      // The depth bound of every JSON body runs first, inside the parse.
      parsed = parseObject(r.rawBody);
    } catch (e) {
      rejected(r, (isPosternError(e) && e.reason) || 'not_a_json_object');
      throw e;
    }
    const name = eventNameOf(kind === 'auto' ? routeWebhook(parsed.body) : kind);
    return { name, payload: parsed.text, dedupeKey: check.receipt };
  };

  const publish = (r: RouteContext, event: PublishInput): Promise<Acknowledgement> =>
    outbox.publishIfNew(event).then(({ id, created }) => {
      ctx.logger.debug(
        {
          event: 'webhook_accepted',
          outboxEventId: id,
          name: event.name,
          duplicate: !created,
          requestId: r.requestId,
        },
        'webhook accepted',
      );
      return { status: 202, body: { accepted: true as const, outboxEventId: id } };
    });

  // Not `async`: intake is the hot path, and the one asynchronous step is the publish (or a
  // settings port that answers with a promise). A refusal throws; the neutral layer maps it.
  const intake =
    (kind: WebhookKind | 'auto') =>
    (r: RouteContext): Promise<Acknowledgement> => {
      const keys = secrets();
      return Array.isArray(keys)
        ? publish(r, verified(kind, r, keys))
        : keys.then((k) => publish(r, verified(kind, r, k)));
    };

  const responses = {
    202: { description: 'Published to the outbox', schema: acknowledgement },
    400: { description: 'Signed body is not a JSON object' },
    401: { description: 'Signature missing or invalid, or timestamp outside tolerance' },
    413: { description: 'Body over the webhook limit' },
    503: { description: 'Webhook secret not configured, or the outbox store is down' },
  };
  const errors = ['webhook_signature_invalid', 'webhook_not_configured'] as const;
  const route = (
    path: string,
    operationId: string,
    kind: WebhookKind | 'auto',
    summary: string,
  ): RouteDef => ({
    method: 'POST',
    path,
    operationId,
    auth: 'none',
    raw: true,
    summary,
    responses,
    errors,
    handler: intake(kind),
  });

  // No library function runs these (the provider calls them, signed): their names are their own.
  return {
    area: 'webhook',
    library: null,
    routes: [
      route(
        '/',
        'receiveWebhook',
        'auto',
        'Unified webhook intake: routed as inbound email or delivery event',
      ),
      route('/events', 'receiveDeliveryEvent', 'event', 'Delivery/engagement event webhook'),
      route('/inbound', 'receiveInboundEmail', 'inbound', 'Inbound (received) email webhook'),
    ],
  };
}
