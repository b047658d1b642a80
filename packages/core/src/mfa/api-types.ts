// `ph.mfa` as a declared interface: what a host reads on hover and in the d.ts, checked
// against the functions `createMfaApi` builds (postern.ts assigns one to the other).
import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/server';
import type { z } from 'zod';
import type { MfaMethod, SessionAnswer } from '../context.js';
import type { Principal } from '../http/types.js';
import type { RequestMeta } from '../util/security-log.js';
import type * as s from './schemas.js';

type In<T extends z.ZodType> = z.input<T>;
type Out<T extends z.ZodType> = z.output<T>;

/** A pending login's token and a code (mailed or recovery). */
export type TokenCodeInput = In<typeof s.tokenCodeBody>;
/** A pending login's token. */
export type TokenInput = In<typeof s.tokenBody>;
/** A pending login's token, a code, and optionally which kind of code it is. */
export type VerifyMfaInput = In<typeof s.verifyBody>;
/** The `mfaToken` of a login that answered `mfaRequired`. */
export type MfaTokenInput = In<typeof s.mfaTokenBody>;
export type MfaTokenCodeInput = In<typeof s.mfaTokenCodeBody>;
export type WebAuthnLoginVerifyInput = In<typeof s.webauthnVerifyBody>;
export type WebAuthnRegisterVerifyInput = In<typeof s.registerVerifyBody>;
export type EnrolPasskeyInput = In<typeof s.enrolPasskeyBody>;
/** A code confirming a new factor, with a password when the login is not fresh. */
export type ConfirmFactorInput = In<typeof s.confirmBody>;
/** A password standing in for a recent login. */
export type OptionalPasswordInput = In<typeof s.optionalPasswordBody>;

/** A TOTP secret to show as a QR code (`otpauthUri`) or to type in. */
export type TotpSeed = Out<typeof s.totpSeedAnswer>;
/** The user's passkeys, without key material. */
export type PasskeysAnswer = Out<typeof s.passkeysAnswer>;
/** Recovery codes are shown once, when the first factor is confirmed. */
export interface RecoveryCodesOnFirstFactor {
  recoveryCodes?: string[];
}
/** MFA state of a user, as `GET /auth/me` shows it. */
export interface MfaSummary {
  enabled: boolean;
  /** Methods the user has confirmed and the host allows, strongest first. */
  methods: MfaMethod[];
}

/** `ph.mfa`: the second factor as plain async functions, input validated exactly as over HTTP.
 *  Three groups: finishing a login that answered `mfaRequired` (with its token), the signed-in
 *  user's factors (a `Principal` first; changes need a fresh login or `password`), and, with
 *  `mfa.required`, enrolling a first factor during the login. Calls without `meta.ip` skip the
 *  per-address limits. */
export interface MfaApi {
  /** `POST /auth/login/email-code`: completes a pending login with the mailed login code. */
  loginWithEmailCode(input: TokenCodeInput, meta?: RequestMeta): Promise<SessionAnswer>;
  /** `POST /auth/mfa/resend`: mails a fresh code for a pending login (409 `nothing_to_resend`). */
  resendCode(input: TokenInput, meta?: RequestMeta): Promise<void>;
  /** `POST /auth/login/email-code/resend`: the same as `resendCode`, under the path of the
   *  login by mailed code. */
  resendLoginCode(input: TokenInput, meta?: RequestMeta): Promise<void>;
  /** `POST /auth/mfa/verify`: a TOTP, mailed or recovery code. */
  verifyMfa(input: VerifyMfaInput, meta?: RequestMeta): Promise<SessionAnswer>;
  /** `POST /auth/mfa/recovery`. */
  verifyRecoveryCode(input: TokenCodeInput, meta?: RequestMeta): Promise<SessionAnswer>;
  /** `POST /auth/mfa/webauthn/options`: the challenge for a passkey login. */
  webauthnLoginOptions(
    input: MfaTokenInput,
    meta?: RequestMeta,
  ): Promise<PublicKeyCredentialRequestOptionsJSON>;
  /** `POST /auth/mfa/webauthn/verify`. */
  webauthnLoginVerify(input: WebAuthnLoginVerifyInput, meta?: RequestMeta): Promise<SessionAnswer>;

  /** `POST /auth/mfa/totp/setup`: a new TOTP secret, used once confirmed. */
  totpSetup(principal: Principal, input?: OptionalPasswordInput, meta?: RequestMeta): Promise<TotpSeed>;
  /** `POST /auth/mfa/totp/confirm`. */
  totpConfirm(
    principal: Principal,
    input: ConfirmFactorInput,
    meta?: RequestMeta,
  ): Promise<RecoveryCodesOnFirstFactor>;
  /** `POST /auth/mfa/email/setup`: mails a code to the account's address. */
  emailSetup(principal: Principal, input?: OptionalPasswordInput, meta?: RequestMeta): Promise<void>;
  /** `POST /auth/mfa/email/confirm`. */
  emailConfirm(
    principal: Principal,
    input: ConfirmFactorInput,
    meta?: RequestMeta,
  ): Promise<RecoveryCodesOnFirstFactor>;
  /** `POST /auth/mfa/webauthn/register/options`. */
  webauthnRegisterOptions(
    principal: Principal,
    input?: OptionalPasswordInput,
    meta?: RequestMeta,
  ): Promise<PublicKeyCredentialCreationOptionsJSON>;
  /** `POST /auth/mfa/webauthn/register/verify`. */
  webauthnRegisterVerify(
    principal: Principal,
    input: WebAuthnRegisterVerifyInput,
    meta?: RequestMeta,
  ): Promise<RecoveryCodesOnFirstFactor & { credentialId: string }>;
  /** `GET /auth/mfa/webauthn/credentials`. */
  listPasskeys(principal: Principal): Promise<PasskeysAnswer>;
  /** Needs the password whatever the login's age. */
  removePasskey(
    principal: Principal,
    id: string,
    input?: OptionalPasswordInput,
    meta?: RequestMeta,
  ): Promise<void>;
  /** Needs the password whatever the login's age; the old codes die. */
  regenerateRecoveryCodes(
    principal: Principal,
    input?: OptionalPasswordInput,
    meta?: RequestMeta,
  ): Promise<{ recoveryCodes: string[] }>;
  /** Needs the password whatever the login's age. */
  disableMfaMethod(
    principal: Principal,
    method: MfaMethod,
    input?: OptionalPasswordInput,
    meta?: RequestMeta,
  ): Promise<void>;
  /** MFA state of a user, as `GET /auth/me` shows it. */
  summary(userId: string): Promise<MfaSummary>;

  /** `mfa.required`, a login without a method: a TOTP secret for the pending login. */
  enrolTotpSetup(input: MfaTokenInput, meta?: RequestMeta): Promise<TotpSeed>;
  /** Confirms it and completes the login. */
  enrolTotpConfirm(
    input: MfaTokenCodeInput,
    meta?: RequestMeta,
  ): Promise<SessionAnswer & RecoveryCodesOnFirstFactor>;
  /** `mfa.required`: mails a code for the pending login. */
  enrolEmailSetup(input: MfaTokenInput, meta?: RequestMeta): Promise<void>;
  /** Confirms it and completes the login. */
  enrolEmailConfirm(
    input: MfaTokenCodeInput,
    meta?: RequestMeta,
  ): Promise<SessionAnswer & RecoveryCodesOnFirstFactor>;
  /** `mfa.required`: passkey registration options for the pending login. */
  enrolPasskeyOptions(
    input: MfaTokenInput,
    meta?: RequestMeta,
  ): Promise<PublicKeyCredentialCreationOptionsJSON>;
  /** Registers the passkey and completes the login. */
  enrolPasskeyVerify(
    input: EnrolPasskeyInput,
    meta?: RequestMeta,
  ): Promise<SessionAnswer & RecoveryCodesOnFirstFactor & { credentialId: string }>;
}
