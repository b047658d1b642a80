import type { EmailCodeStore } from './email-code-store.js';
import type { MfaFactorStore } from './mfa-factor-store.js';
import type { PendingLoginStore } from './pending-login-store.js';
import type { RecoveryCodeStore } from './recovery-code-store.js';
import type { WebAuthnChallengeStore } from './webauthn-challenge-store.js';
import type { WebAuthnCredentialStore } from './webauthn-credential-store.js';

/** The mfa area's storage ports (one port per file beside this one). */
export type MfaStores = {
  mfaFactors: MfaFactorStore;
  pendingLogins: PendingLoginStore;
  emailCodes: EmailCodeStore;
  recoveryCodes: RecoveryCodeStore;
  webauthnCredentials: WebAuthnCredentialStore;
  webauthnChallenges: WebAuthnChallengeStore;
};
