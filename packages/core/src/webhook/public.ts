/**
 * `@postern/core/webhook`: what a host or a test needs to check, decode and route a mail
 * provider's signed webhook outside Postern's own intake route (Standard Webhooks signatures,
 * the secret setting and its parsing, the outbox event names a verified body becomes).
 * @module
 */
export { EVENT_RECEIVED, INBOUND_RECEIVED } from '../outbox/types.js';
export { DELIVERY_EVENT_TYPES, eventNameOf, routeWebhook } from './routing.js';
export { parseSecrets, WEBHOOK_SECRET_SETTING } from './secrets.js';
export {
  checkSignature,
  decodeSignature,
  type SignatureCheck,
  type SignatureInput,
  type SignatureRejection,
} from './signature.js';
export type { WebhookKind, WebhookOptions } from './types.js';
