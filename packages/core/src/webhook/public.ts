// What the package exports of the webhook area (hosts and tests verify and route with these).
export { DELIVERY_EVENT_TYPES, eventNameOf, routeWebhook } from './routing.js';
export { parseSecrets, WEBHOOK_SECRET_SETTING } from './secrets.js';
export {
  checkSignature,
  decodeSignature,
  type SignatureCheck,
  type SignatureInput,
  type SignatureRejection,
} from './signature.js';
export type * from './types.js';
