// The root of `@postern/core`: what a host app needs, listed by name. Everything else lives on
// a subpath: `/ports` (store authors), `/webhook` (signature checks and event routing),
// `/memory`, `/mailers`, and `/internal` (the other Postern packages only). A check counts the
// built root's runtime values (scripts/root-exports.mjs); docs/decisions/0012-public-api.md
// says what belongs here.

// The instance and its options.
export type { AcceptedAnswer, AuthApi, MeAnswer, SessionsAnswer, SignupAnswer } from './auth/api-types.js';
export type {
  PasswordHashingOptions,
  PasswordPolicyOptions,
  ThrottleBucket,
  ThrottleLimit,
  ThrottleOptions,
} from './auth/option-types.js';
export type { MfaRequiredAnswer, SessionAnswer } from './context.js';
// Errors a host catches or throws, and the one helper that answers them as problem+json.
export {
  ConfigError,
  type ErrorCode,
  type FieldError,
  isPosternError,
  isStoreError,
  PosternError,
  type PosternErrorOptions,
  type Problem,
  StoreError,
} from './errors.js';
export type { Authorization } from './http/handle.js';
export type { CookieSessionOptions } from './http/refresh-cookie.js';
export { posternProblem } from './http/respond.js';
// Who is calling: what `requireAuth` and `ph.auth.verifyAccessToken` hand a host's route.
export type { HeaderValue, NeutralRequest, NeutralResponse, Principal } from './http/types.js';
export type { AttachmentDownload, InboxApi, ThreadPage } from './inbox/api-types.js';
// The inbox's collaborators: the mail provider, where attachments go, who hears of new mail.
export { directoryFiles } from './inbox/directory-files.js';
export { mailNotifier } from './inbox/notify.js';
export type { InboxOptions, ProviderConfig } from './inbox/option-types.js';
export type { RecordOutboundInput } from './inbox/outbound.js';
export { ProviderError, resendProvider } from './inbox/provider-client.js';
export type {
  AccountView,
  AttachmentView,
  MemberView,
  MessageView,
  ThreadDetail,
  ThreadSummary,
} from './inbox/views.js';
export type { MfaApi, MfaSummary, PasskeysAnswer, TotpSeed } from './mfa/api-types.js';
export type { MfaOptions, SealingKeyInput, WebAuthnOptions } from './mfa/option-types.js';
export type { PosternOptions } from './options.js';
export type { Outbox } from './outbox/index.js';
export type { Consumer, DeliveredEvent, OutboxOptions, PublishInput } from './outbox/types.js';
export { RetryLater } from './outbox/types.js';
// Logging and time.
export { type Clock, systemClock } from './ports/clock.js';
// Port types a host names when it configures the instance (store authors: `/ports`).
export type { FileStore } from './ports/file-store.js';
export { jsonLinesLogger, type Logger, silentLogger, warningsLogger } from './ports/logger.js';
export type { MailProvider } from './ports/mail-provider.js';
export type { Mail, Mailer } from './ports/mailer.js';
export type { MfaMethod } from './ports/mfa-method.js';
export type { InboxNotice, Notifier } from './ports/notifier.js';
export type { Settings, SettingsInput } from './ports/settings.js';
export type { Stores } from './ports/stores.js';
export type { User } from './ports/user-store.js';
export { createPostern, type Postern } from './postern.js';
// Signing keys.
export { type Algorithm, createKeyring, type KeyInput, type Keyring } from './tokens/keyring.js';
export type { RequestMeta } from './util/security-log.js';
export type { WebhookOptions } from './webhook/types.js';
