// What the MFA area exports from `@postern/core`.
export type { MfaOptions, SealingKeyInput, WebAuthnOptions } from './options.js';
export { mfaSummary } from './summary.js';
