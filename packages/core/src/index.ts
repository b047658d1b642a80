// The root of `@postern/core`: what a host app needs, listed by name. Everything else lives on
// a subpath: `/ports` (store authors), `/webhook` (signature checks and event routing),
// `/memory`, `/mailers`, and `/internal` (the other Postern packages only). A check counts the
// built root's runtime values (scripts/root-exports.mjs); docs/decisions/0012-public-api.md
// says what belongs here.

// biome-ignore-all assist/source/organizeImports: the exports are grouped by what a host does with them, not by path.

// The instance, its options and its areas' declared interfaces.
export { createPostern, type Postern } from './postern.js';
export type { PosternOptions } from './options.js';
export type {
  AcceptedAnswer,
  AuthApi,
  ChangePasswordInput,
  ConfirmEmailChangeInput,
  ForgotInput,
  ForgotResetInput,
  LoginInput,
  LogoutInput,
  MeAnswer,
  PasswordInput,
  RefreshInput,
  RequestEmailChangeInput,
  RolesAnswer,
  SessionsAnswer,
  SignupAnswer,
  SignupInput,
  VerifyEmailInput,
} from './auth/api-types.js';
export type { MfaRequiredAnswer, SessionAnswer } from './context.js';
export type {
  ConfirmFactorInput,
  EnrolPasskeyInput,
  MfaApi,
  MfaSummary,
  MfaTokenCodeInput,
  MfaTokenInput,
  OptionalPasswordInput,
  PasskeysAnswer,
  RecoveryCodesOnFirstFactor,
  TokenCodeInput,
  TokenInput,
  TotpSeed,
  VerifyMfaInput,
  WebAuthnLoginVerifyInput,
  WebAuthnRegisterVerifyInput,
} from './mfa/api-types.js';
export type { AttachmentDownload, InboxApi, ThreadPage } from './inbox/api-types.js';
export type { Outbox } from './outbox/index.js';

// Option groups.
export type {
  PasswordHashingOptions,
  PasswordPolicyOptions,
  ThrottleBucket,
  ThrottleLimit,
  ThrottleOptions,
} from './auth/option-types.js';
export type { CookieSessionOptions } from './http/refresh-cookie.js';
export type { MfaOptions, SealingKeyInput, WebAuthnOptions } from './mfa/option-types.js';
export type { InboxOptions, ProviderConfig } from './inbox/option-types.js';
export type { OutboxOptions } from './outbox/types.js';
export type { WebhookOptions } from './webhook/types.js';

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
export { posternProblem } from './http/respond.js';

// Who is calling: what `requireAuth` and `ph.auth.verifyAccessToken` hand a host's route.
export type { Authorization } from './http/handle.js';
export type { HeaderValue, NeutralRequest, NeutralResponse, Principal } from './http/types.js';
export type { RequestMeta } from './util/security-log.js';

// Signing keys.
export { type Algorithm, createKeyring, type KeyInput, type Keyring } from './tokens/keyring.js';

// Logging and time.
export { jsonLinesLogger, type Logger, silentLogger, warningsLogger } from './ports/logger.js';
export { type Clock, systemClock } from './ports/clock.js';

// The inbox's collaborators: the mail provider, where attachments go, who hears of new mail,
// and what its consumers and views hand a host.
export { ProviderError, resendProvider } from './inbox/provider-client.js';
export { directoryFiles } from './inbox/directory-files.js';
export { mailNotifier } from './inbox/notify.js';
export type { RecordOutboundInput } from './inbox/outbound.js';
export type {
  AccountView,
  AttachmentView,
  MemberView,
  MessageView,
  ThreadDetail,
  ThreadSummary,
} from './inbox/views.js';
export { RetryLater, type Consumer, type DeliveredEvent, type PublishInput } from './outbox/types.js';

// Port types a host names when it configures the instance (store authors: `/ports`).
export type { FileStore } from './ports/file-store.js';
export type { MailProvider } from './ports/mail-provider.js';
export type { Mail, Mailer } from './ports/mailer.js';
export type { MfaMethod } from './ports/mfa-method.js';
export type { InboxNotice, Notifier } from './ports/notifier.js';
export type { Settings, SettingsInput } from './ports/settings.js';
export type { Stores } from './ports/stores.js';
export type { User } from './ports/user-store.js';
