export * from './auth/public.js';
export type * from './context.js';
export * from './errors.js';
export { problemClientError } from './http/client-error.js';
export { type Authorization, validate } from './http/handle.js';
/** The RFC 9457 answer for an error, e.g. a host's own 404 in Postern's format. */
export type { CookieSessionOptions } from './http/refresh-cookie.js';
export { errorToResponse as problemResponse, posternProblem } from './http/respond.js';
export type * from './http/types.js';
export * from './inbox/public.js';
export * from './mfa/public.js';
export type { PosternOptions } from './options.js';
export type { Outbox } from './outbox/index.js';
export * from './outbox/types.js';
export * from './ports/index.js';
export { createPostern, type Postern } from './postern.js';
export { type Algorithm, createKeyring, type KeyInput, type Keyring } from './tokens/keyring.js';
export { causeMessage, errorMessage } from './util/error-message.js';
export * from './webhook/public.js';
