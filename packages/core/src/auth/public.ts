// What hosts of the auth area import from `@postern/core`.
export { canonicalEmail, isMailboxAddress } from './email.js';
export type { RequestMeta } from './log.js';
export type {
  PasswordHashingOptions,
  PasswordPolicyOptions,
  ThrottleLimit,
  ThrottleOptions,
} from './options.js';
export { REAUTH_WINDOW_SECONDS, requireFreshAuth } from './reauth.js';
