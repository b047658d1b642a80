import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { z } from 'zod';
import type { RequestMeta } from '../auth/log.js';
import type { MfaMethod } from '../context.js';
import { validate } from '../http/handle.js';
import type { Principal } from '../http/types.js';
import { validated, validatedFor } from '../util/validated.js';
import * as enrol from './enrol.js';
import * as atLogin from './enrol-at-login.js';
import type { MfaEnv } from './env.js';
import * as login from './login.js';
import * as s from './schemas.js';

type In<T extends z.ZodType> = z.input<T>;
type Out<T extends z.ZodType> = z.output<T>;
type Password = Out<typeof s.optionalPasswordBody>;

/** Library calls without an address skip the per-address limits (as in the auth area). */
const ipOf = (meta: RequestMeta) => meta.ip ?? '';

/** Every MFA flow of routes 9-15 and the enrolment table, with already-validated input (what
 *  the routes call). */
export function createMfaFlows(env: MfaEnv) {
  return {
    /** Route 9: completes a pending login with the mailed login code. */
    loginWithEmailCode: (input: Out<typeof s.tokenCodeBody>, meta: RequestMeta = {}) =>
      login.verifyCode(env, { ...input, methodType: 'email', methodField: 'token', ip: ipOf(meta) }),
    /** Routes 10 and 13: mails a fresh code for a pending login (409 `nothing_to_resend`). */
    resendCode: (input: Out<typeof s.tokenBody>, meta: RequestMeta = {}) =>
      login.resendCode(env, { token: input.token, ip: ipOf(meta) }),
    /** Route 11: a TOTP, mailed or recovery code. */
    verifyMfa: (input: Out<typeof s.verifyBody>, meta: RequestMeta = {}) =>
      login.verifyCode(env, { ...input, ip: ipOf(meta) }),
    /** Route 12. */
    verifyRecoveryCode: (input: Out<typeof s.tokenCodeBody>, meta: RequestMeta = {}) =>
      login.verifyCode(env, { ...input, methodType: 'recovery', ip: ipOf(meta) }),
    /** Route 14. */
    webauthnLoginOptions: (input: Out<typeof s.mfaTokenBody>, meta: RequestMeta = {}) =>
      login.webauthnLoginOptions(env, { mfaToken: input.mfaToken, ip: ipOf(meta) }),
    /** Route 15. */
    webauthnLoginVerify: (input: Out<typeof s.webauthnVerifyBody>, meta: RequestMeta = {}) =>
      login.webauthnLoginVerify(env, {
        mfaToken: input.mfaToken,
        assertionResponse: input.assertionResponse as AuthenticationResponseJSON,
        ip: ipOf(meta),
      }),

    totpSetup: (principal: Principal, input?: Password) => enrol.totpSetup(env, principal, input?.password),
    totpConfirm: (principal: Principal, input: Out<typeof s.confirmBody>, meta: RequestMeta = {}) =>
      enrol.totpConfirm(env, principal, { ...input, ip: ipOf(meta) }),
    emailSetup: (principal: Principal, input?: Password) => enrol.emailSetup(env, principal, input?.password),
    emailConfirm: (principal: Principal, input: Out<typeof s.confirmBody>, meta: RequestMeta = {}) =>
      enrol.emailConfirm(env, principal, { ...input, ip: ipOf(meta) }),
    webauthnRegisterOptions: (principal: Principal, input?: Password, meta: RequestMeta = {}) =>
      enrol.webauthnRegisterOptions(env, principal, { password: input?.password, ip: ipOf(meta) }),
    webauthnRegisterVerify: (
      principal: Principal,
      input: Out<typeof s.registerVerifyBody>,
      meta: RequestMeta = {},
    ) =>
      enrol.webauthnRegisterVerify(env, principal, {
        attestationResponse: input.attestationResponse as RegistrationResponseJSON,
        name: input.name,
        password: input.password,
        ip: ipOf(meta),
      }),
    listPasskeys: async (principal: Principal) => ({ credentials: await enrol.listPasskeys(env, principal) }),
    /** Needs the password whatever the login's age. */
    removePasskey: (principal: Principal, id: string, input?: Password) =>
      enrol.removePasskey(env, principal, id, input?.password),
    /** Needs the password whatever the login's age; the old codes die. */
    regenerateRecoveryCodes: (principal: Principal, input?: Password) =>
      enrol.regenerateRecovery(env, principal, input?.password),
    /** Needs the password whatever the login's age. */
    disableMfaMethod: (principal: Principal, method: MfaMethod, input?: Password) =>
      enrol.disableMethod(env, principal, method, input?.password),

    // `mfa.required`: a login without a method enrols its first one with the pending token.
    enrolTotpSetup: (input: Out<typeof s.mfaTokenBody>) => atLogin.enrolTotpSetup(env, input),
    enrolTotpConfirm: (input: Out<typeof s.mfaTokenCodeBody>, meta: RequestMeta = {}) =>
      atLogin.enrolTotpConfirm(env, { ...input, ip: ipOf(meta) }),
    enrolEmailSetup: (input: Out<typeof s.mfaTokenBody>) => atLogin.enrolEmailSetup(env, input),
    enrolEmailConfirm: (input: Out<typeof s.mfaTokenCodeBody>, meta: RequestMeta = {}) =>
      atLogin.enrolEmailConfirm(env, { ...input, ip: ipOf(meta) }),
    enrolPasskeyOptions: (input: Out<typeof s.mfaTokenBody>, meta: RequestMeta = {}) =>
      atLogin.enrolPasskeyOptions(env, { ...input, ip: ipOf(meta) }),
    enrolPasskeyVerify: (input: Out<typeof s.enrolPasskeyBody>, meta: RequestMeta = {}) =>
      atLogin.enrolPasskeyVerify(env, {
        mfaToken: input.mfaToken,
        attestationResponse: input.attestationResponse as RegistrationResponseJSON,
        name: input.name,
        ip: ipOf(meta),
      }),
  };
}

export type MfaFlows = ReturnType<typeof createMfaFlows>;

/** `gh.auth.*` MFA flows as plain async functions, inputs validated exactly as over HTTP. */
export function createMfaApi(flows: MfaFlows) {
  return {
    ...flows,
    loginWithEmailCode: validated(s.tokenCodeBody, flows.loginWithEmailCode),
    resendCode: validated(s.tokenBody, flows.resendCode),
    verifyMfa: validated(s.verifyBody, flows.verifyMfa),
    verifyRecoveryCode: validated(s.tokenCodeBody, flows.verifyRecoveryCode),
    webauthnLoginOptions: validated(s.mfaTokenBody, flows.webauthnLoginOptions),
    webauthnLoginVerify: validated(s.webauthnVerifyBody, flows.webauthnLoginVerify),
    totpSetup: validatedFor(s.optionalPasswordBody, flows.totpSetup),
    totpConfirm: validatedFor(s.confirmBody, flows.totpConfirm),
    emailSetup: validatedFor(s.optionalPasswordBody, flows.emailSetup),
    emailConfirm: validatedFor(s.confirmBody, flows.emailConfirm),
    webauthnRegisterOptions: validatedFor(s.optionalPasswordBody, flows.webauthnRegisterOptions),
    webauthnRegisterVerify: validatedFor(s.registerVerifyBody, flows.webauthnRegisterVerify),
    regenerateRecoveryCodes: validatedFor(s.optionalPasswordBody, flows.regenerateRecoveryCodes),
    enrolTotpSetup: validated(s.mfaTokenBody, flows.enrolTotpSetup),
    enrolTotpConfirm: validated(s.mfaTokenCodeBody, flows.enrolTotpConfirm),
    enrolEmailSetup: validated(s.mfaTokenBody, flows.enrolEmailSetup),
    enrolEmailConfirm: validated(s.mfaTokenCodeBody, flows.enrolEmailConfirm),
    enrolPasskeyOptions: validated(s.mfaTokenBody, flows.enrolPasskeyOptions),
    enrolPasskeyVerify: validated(s.enrolPasskeyBody, flows.enrolPasskeyVerify),
    removePasskey: async (principal: Principal, id: string, input?: In<typeof s.optionalPasswordBody>) =>
      flows.removePasskey(principal, id, validate(s.optionalPasswordBody, input)),
    disableMfaMethod: async (
      principal: Principal,
      method: MfaMethod,
      input?: In<typeof s.optionalPasswordBody>,
    ) => flows.disableMfaMethod(principal, method, validate(s.optionalPasswordBody, input)),
  };
}
