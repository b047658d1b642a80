import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { z } from 'zod';
import type { MfaMethod } from '../context.js';
import { validate } from '../http/handle.js';
import type { Principal } from '../http/types.js';
import type { RequestMeta } from '../util/security-log.js';
import { validated, validatedFor } from '../util/validated.js';
import * as enrol from './enrol.js';
import * as atLogin from './enrol-at-login.js';
import type { MfaEnv } from './env.js';
import * as login from './login.js';
import * as s from './schemas.js';

type In<T extends z.ZodType> = z.input<T>;
type Out<T extends z.ZodType> = z.output<T>;
type Password = Out<typeof s.optionalPasswordBody>;

/** Every MFA flow of the login routes and the enrolment table, with already-validated input (what
 *  the routes call). Library calls without `meta.ip` skip the per-address limits. */
export function createMfaFlows(env: MfaEnv) {
  return {
    /** `POST /auth/login/email-code`: completes a pending login with the mailed login code. */
    loginWithEmailCode: (input: Out<typeof s.tokenCodeBody>, meta: RequestMeta = {}) =>
      login.loginWithEmailCode(env, input, meta),
    /** `POST /auth/login/email-code/resend`: the same as `resendCode`, under the path of the
     *  email-code login. */
    resendLoginCode: (input: Out<typeof s.tokenBody>, meta: RequestMeta = {}) =>
      login.resendCode(env, input, meta),
    /** `POST /auth/mfa/resend`: mails a fresh code for a pending login (409 `nothing_to_resend`). */
    resendCode: (input: Out<typeof s.tokenBody>, meta: RequestMeta = {}) =>
      login.resendCode(env, input, meta),
    /** `POST /auth/mfa/verify`: a TOTP, mailed or recovery code. */
    verifyMfa: (input: Out<typeof s.verifyBody>, meta: RequestMeta = {}) => login.verifyMfa(env, input, meta),
    /** `POST /auth/mfa/recovery`. */
    verifyRecoveryCode: (input: Out<typeof s.tokenCodeBody>, meta: RequestMeta = {}) =>
      login.verifyRecoveryCode(env, input, meta),
    /** `POST /auth/mfa/webauthn/options`. */
    webauthnLoginOptions: (input: Out<typeof s.mfaTokenBody>, meta: RequestMeta = {}) =>
      login.webauthnLoginOptions(env, input, meta),
    /** `POST /auth/mfa/webauthn/verify`. */
    webauthnLoginVerify: (input: Out<typeof s.webauthnVerifyBody>, meta: RequestMeta = {}) =>
      login.webauthnLoginVerify(
        env,
        {
          mfaToken: input.mfaToken,
          assertionResponse: input.assertionResponse as AuthenticationResponseJSON,
        },
        meta,
      ),

    totpSetup: (principal: Principal, input?: Password, meta: RequestMeta = {}) =>
      enrol.totpSetup(env, principal, input?.password, meta),
    totpConfirm: (principal: Principal, input: Out<typeof s.confirmBody>, meta: RequestMeta = {}) =>
      enrol.totpConfirm(env, principal, input, meta),
    emailSetup: (principal: Principal, input?: Password, meta: RequestMeta = {}) =>
      enrol.emailSetup(env, principal, input?.password, meta),
    emailConfirm: (principal: Principal, input: Out<typeof s.confirmBody>, meta: RequestMeta = {}) =>
      enrol.emailConfirm(env, principal, input, meta),
    webauthnRegisterOptions: (principal: Principal, input?: Password, meta: RequestMeta = {}) =>
      enrol.webauthnRegisterOptions(env, principal, { password: input?.password }, meta),
    webauthnRegisterVerify: (
      principal: Principal,
      input: Out<typeof s.registerVerifyBody>,
      meta: RequestMeta = {},
    ) =>
      enrol.webauthnRegisterVerify(
        env,
        principal,
        {
          attestationResponse: input.attestationResponse as RegistrationResponseJSON,
          name: input.name,
          password: input.password,
        },
        meta,
      ),
    listPasskeys: async (principal: Principal) => ({ credentials: await enrol.listPasskeys(env, principal) }),
    /** Needs the password whatever the login's age. */
    removePasskey: (principal: Principal, id: string, input?: Password, meta: RequestMeta = {}) =>
      enrol.removePasskey(env, principal, id, input?.password, meta),
    /** Needs the password whatever the login's age; the old codes die. */
    regenerateRecoveryCodes: (principal: Principal, input?: Password, meta: RequestMeta = {}) =>
      enrol.regenerateRecoveryCodes(env, principal, input?.password, meta),
    /** Needs the password whatever the login's age. */
    disableMfaMethod: (principal: Principal, method: MfaMethod, input?: Password, meta: RequestMeta = {}) =>
      enrol.disableMfaMethod(env, principal, method, input?.password, meta),

    // `mfa.required`: a login without a method enrols its first one with the pending token.
    enrolTotpSetup: (input: Out<typeof s.mfaTokenBody>, meta: RequestMeta = {}) =>
      atLogin.enrolTotpSetup(env, input, meta),
    enrolTotpConfirm: (input: Out<typeof s.mfaTokenCodeBody>, meta: RequestMeta = {}) =>
      atLogin.enrolTotpConfirm(env, input, meta),
    enrolEmailSetup: (input: Out<typeof s.mfaTokenBody>, meta: RequestMeta = {}) =>
      atLogin.enrolEmailSetup(env, input, meta),
    enrolEmailConfirm: (input: Out<typeof s.mfaTokenCodeBody>, meta: RequestMeta = {}) =>
      atLogin.enrolEmailConfirm(env, input, meta),
    enrolPasskeyOptions: (input: Out<typeof s.mfaTokenBody>, meta: RequestMeta = {}) =>
      atLogin.enrolPasskeyOptions(env, input, meta),
    enrolPasskeyVerify: (input: Out<typeof s.enrolPasskeyBody>, meta: RequestMeta = {}) =>
      atLogin.enrolPasskeyVerify(
        env,
        {
          mfaToken: input.mfaToken,
          attestationResponse: input.attestationResponse as RegistrationResponseJSON,
          name: input.name,
        },
        meta,
      ),
  };
}

export type MfaFlows = ReturnType<typeof createMfaFlows>;

/** A removal keyed by one more argument (a passkey id, a method), its `{ password }` body
 *  validated as over HTTP. */
const passwordChecked =
  <K>(flow: (principal: Principal, key: K, input: Password, meta: RequestMeta) => Promise<void>) =>
  async (principal: Principal, key: K, input?: In<typeof s.optionalPasswordBody>, meta: RequestMeta = {}) =>
    flow(principal, key, validate(s.optionalPasswordBody, input), meta);

/** `ph.mfa.*` (without `summary`): the flows as plain async functions, inputs validated exactly
 *  as over HTTP. */
export function createMfaApi(flows: MfaFlows) {
  return {
    ...flows,
    loginWithEmailCode: validated(s.tokenCodeBody, flows.loginWithEmailCode),
    resendLoginCode: validated(s.tokenBody, flows.resendLoginCode),
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
    removePasskey: passwordChecked(flows.removePasskey),
    disableMfaMethod: passwordChecked(flows.disableMfaMethod),
  };
}
