import { EVENT_RECEIVED, INBOUND_RECEIVED } from '../outbox/types.js';
import type { WebhookKind } from './types.js';

/** The eight delivery/engagement event types. */
export const DELIVERY_EVENT_TYPES: ReadonlySet<string> = new Set([
  'sent',
  'delivered',
  'bounced',
  'complained',
  'opened',
  'clicked',
  'failed',
  'delivery_delayed',
]);

const INBOUND_MARKERS = ['email.received', 'inbound', 'received'];
const INBOUND_DATA_FIELDS = ['from', 'to', 'subject'];

/** Own properties only: a payload's `__proto__` or `constructor` is never looked up. */
function field(obj: object, key: string): unknown {
  return Object.hasOwn(obj, key) ? (obj as Record<string, unknown>)[key] : undefined;
}

function namesInbound(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const lower = value.toLowerCase();
  for (const m of INBOUND_MARKERS) if (lower.includes(m)) return true;
  return false;
}

function isDeliveryType(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const v = value.toLowerCase();
  return DELIVERY_EVENT_TYPES.has(v.startsWith('email.') ? v.slice(6) : v);
}

/** Routing of the unified intake (docs/webhooks.md, Routing), first match wins:
 *  1. `type`, `event` or `name` contains `email.received`, `inbound` or `received` -> inbound;
 *  1b. `type` or `event` names a delivery type, bare or `email.`-prefixed -> event (Resend's
 *      delivery events carry `data.from/to/subject`, which rule 2 would send to inbound);
 *  2. `data` is an object with `from`, `to` or `subject` -> inbound;
 *  3. `type` is a string -> event;
 *  4. otherwise -> inbound. */
export function routeWebhook(body: object): WebhookKind {
  const type = field(body, 'type');
  const event = field(body, 'event');
  if (namesInbound(type) || namesInbound(event) || namesInbound(field(body, 'name'))) return 'inbound';
  if (isDeliveryType(type) || isDeliveryType(event)) return 'event';
  const data = field(body, 'data');
  if (typeof data === 'object' && data !== null && !Array.isArray(data)) {
    for (const k of INBOUND_DATA_FIELDS) if (Object.hasOwn(data, k)) return 'inbound';
  }
  return typeof type === 'string' ? 'event' : 'inbound';
}

/** Outbox event name of each kind. */
export function eventNameOf(kind: WebhookKind): string {
  return kind === 'event' ? EVENT_RECEIVED : INBOUND_RECEIVED;
}
