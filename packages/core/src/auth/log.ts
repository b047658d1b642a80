// The auth area's flows log through the shared security-event helpers.
export {
  type AuthEvent,
  ipOf,
  logAuthEvent,
  metaOf,
  type RequestMeta,
} from '../util/security-log.js';
