/**
 * `@postern/core/ports`: every port interface and record type a store author implements
 * (`Stores` and its parts, the mailer, the mail provider, files, notifier, clock, logger,
 * settings), with the helpers a store needs: `StoreError` for infrastructure failures,
 * `STATUS_RANK`, `FILE_KEY`. `describeStoreContract` in `@postern/testkit` checks a store.
 * @module
 */
// One port per file. Each area adds its ports here.
export { isStoreError, StoreError } from '../errors.js';

export * from './auth-stores.js';
export * from './clock.js';
export * from './email-code-store.js';
export * from './file-store.js';
export * from './inbox-account-store.js';
export * from './inbox-attachment-store.js';
export * from './inbox-message-store.js';
export * from './inbox-notification-store.js';
export * from './inbox-stores.js';
export * from './inbox-thread-store.js';
export * from './limiter-store.js';
export * from './logger.js';
export * from './mail-event-store.js';
export * from './mail-provider.js';
export * from './mailer.js';
export * from './mfa-factor-store.js';
export * from './mfa-method.js';
export * from './mfa-stores.js';
export * from './notifier.js';
export * from './outbox-store.js';
export * from './pending-login-store.js';
export * from './recovery-code-store.js';
export * from './reset-code-store.js';
export * from './session-store.js';
export * from './settings.js';
export * from './stores.js';
export * from './user-store.js';
export * from './webauthn-challenge-store.js';
export * from './webauthn-credential-store.js';
export * from './webhook-stores.js';
