import { z } from 'zod';
import { routeOf } from '../http/route-table.js';
import type { RouteDef, RouteTable } from '../http/types.js';
import type { MfaMethod } from '../ports/mfa-method.js';
import { metaOf } from '../util/security-log.js';
import type { MfaFlows } from './api.js';
import type { MfaEnv } from './env.js';
import * as s from './schemas.js';

const session = { 200: { description: 'Session', schema: s.sessionSchema } };
const accepted = { 202: { description: 'Accepted', schema: s.acceptedSchema } };
const noContent = { 204: { description: 'Done' } };
/** Codes shared by groups of routes: a change to the caller's factors (fresh authentication, a
 *  method switched off in the settings answers 404), its confirmation, a pending login's code
 *  check and resend, and the confirmation of a factor enrolled at login. */
const changeErrors = ['reauth_required', 'not_found', 'rate_limited'] as const;
const confirmErrors = ['invalid_code', ...changeErrors] as const;
const pendingCodeErrors = ['invalid_token', 'invalid_code', 'rate_limited'] as const;
const pendingResendErrors = ['invalid_token', 'nothing_to_resend', 'rate_limited'] as const;
const enrolConfirmErrors = [...pendingCodeErrors, 'not_found'] as const;

/** A route of these tables: its `operationId` names an MFA flow. */
const route = routeOf<MfaFlows>();

/** The methods `DELETE /mfa/:method` removes; any other segment is not that route's. */
const methodParam = z.object({ method: z.enum(['totp', 'email', 'webauthn']) });

/** The MFA routes (area `auth`, docs/mfa.md): pending login, enrolment and housekeeping, and
 *  with `mfa.required` the enrolment during a login. Each runs the MFA flow its `operationId`
 *  names. */
export function mfaRoutes(env: MfaEnv, flows: MfaFlows): RouteTable {
  const routes: RouteDef[] = [
    // --- pending login (no Bearer: the pending token travels in the body) ---
    route({
      method: 'POST',
      path: '/login/email-code',
      operationId: 'loginWithEmailCode',
      refreshCookie: 'sets',
      auth: 'none',
      body: s.tokenCodeBody,
      summary: 'Complete a pending login with the emailed code',
      errors: pendingCodeErrors,
      responses: session,
      handler: async (rc) => ({ status: 200, body: await flows.loginWithEmailCode(rc.body, metaOf(rc)) }),
    }),
    route({
      method: 'POST',
      path: '/login/email-code/resend',
      operationId: 'resendLoginCode',
      auth: 'none',
      body: s.tokenBody,
      summary: 'Mail a fresh login code for a pending login',
      errors: pendingResendErrors,
      responses: accepted,
      handler: async (rc) => {
        await flows.resendLoginCode(rc.body, metaOf(rc));
        return { status: 202, body: { accepted: true } };
      },
    }),
    route({
      method: 'POST',
      path: '/mfa/verify',
      operationId: 'verifyMfa',
      refreshCookie: 'sets',
      auth: 'none',
      body: s.verifyBody,
      summary: 'Complete a pending login with a TOTP, emailed or recovery code',
      errors: pendingCodeErrors,
      responses: session,
      handler: async (rc) => ({ status: 200, body: await flows.verifyMfa(rc.body, metaOf(rc)) }),
    }),
    route({
      method: 'POST',
      path: '/mfa/recovery',
      operationId: 'verifyRecoveryCode',
      refreshCookie: 'sets',
      auth: 'none',
      body: s.tokenCodeBody,
      summary: 'Complete a pending login with a recovery code',
      errors: pendingCodeErrors,
      responses: session,
      handler: async (rc) => ({ status: 200, body: await flows.verifyRecoveryCode(rc.body, metaOf(rc)) }),
    }),
    route({
      method: 'POST',
      path: '/mfa/resend',
      operationId: 'resendCode',
      auth: 'none',
      body: s.tokenBody,
      summary: 'Mail a fresh code for a pending login (email method)',
      errors: pendingResendErrors,
      responses: accepted,
      handler: async (rc) => {
        await flows.resendCode(rc.body, metaOf(rc));
        return { status: 202, body: { accepted: true } };
      },
    }),
    route({
      method: 'POST',
      path: '/mfa/webauthn/options',
      operationId: 'webauthnLoginOptions',
      auth: 'none',
      body: s.mfaTokenBody,
      summary: 'WebAuthn request options for a pending login',
      errors: ['invalid_token', 'rate_limited'],
      responses: {
        200: { description: 'PublicKeyCredentialRequestOptionsJSON', schema: s.requestOptionsAnswer },
      },
      handler: async (rc) => ({
        status: 200,
        body: await flows.webauthnLoginOptions(rc.body, metaOf(rc)),
      }),
    }),
    route({
      method: 'POST',
      path: '/mfa/webauthn/verify',
      operationId: 'webauthnLoginVerify',
      refreshCookie: 'sets',
      auth: 'none',
      body: s.webauthnVerifyBody,
      summary: 'Complete a pending login with a WebAuthn assertion',
      errors: pendingCodeErrors,
      responses: session,
      handler: async (rc) => ({ status: 200, body: await flows.webauthnLoginVerify(rc.body, metaOf(rc)) }),
    }),

    // --- enrolment and housekeeping (Bearer) ---
    route({
      method: 'POST',
      path: '/mfa/totp/setup',
      operationId: 'totpSetup',
      auth: 'bearer',
      body: s.optionalPasswordBody,
      summary: 'Start TOTP enrolment: a new seed, active once confirmed',
      errors: changeErrors,
      responses: {
        200: {
          description: 'Seed',
          schema: s.totpSeedAnswer,
        },
      },
      handler: async (rc) => ({
        status: 200,
        body: await flows.totpSetup(rc.principal, rc.body, metaOf(rc)),
      }),
    }),
    route({
      method: 'POST',
      path: '/mfa/totp/confirm',
      operationId: 'totpConfirm',
      auth: 'bearer',
      body: s.confirmBody,
      summary: 'Confirm TOTP with a first code; recovery codes on the first method',
      errors: confirmErrors,
      responses: { 200: { description: 'Enabled', schema: s.recoveryCodesSchema.partial() } },
      handler: async (rc) => ({
        status: 200,
        body: await flows.totpConfirm(rc.principal, rc.body, metaOf(rc)),
      }),
    }),
    route({
      method: 'POST',
      path: '/mfa/email/setup',
      operationId: 'emailSetup',
      auth: 'bearer',
      body: s.optionalPasswordBody,
      summary: 'Start email-code enrolment: a code is mailed',
      errors: changeErrors,
      responses: accepted,
      handler: async (rc) => {
        await flows.emailSetup(rc.principal, rc.body, metaOf(rc));
        return { status: 202, body: { accepted: true } };
      },
    }),
    route({
      method: 'POST',
      path: '/mfa/email/confirm',
      operationId: 'emailConfirm',
      auth: 'bearer',
      body: s.confirmBody,
      summary: 'Confirm the email method with the mailed code',
      errors: confirmErrors,
      responses: { 200: { description: 'Enabled', schema: s.recoveryCodesSchema.partial() } },
      handler: async (rc) => ({
        status: 200,
        body: await flows.emailConfirm(rc.principal, rc.body, metaOf(rc)),
      }),
    }),
    route({
      method: 'POST',
      path: '/mfa/webauthn/register/options',
      operationId: 'webauthnRegisterOptions',
      auth: 'bearer',
      body: s.optionalPasswordBody,
      summary: 'WebAuthn creation options for a new passkey',
      errors: changeErrors,
      responses: {
        200: { description: 'PublicKeyCredentialCreationOptionsJSON', schema: s.creationOptionsAnswer },
      },
      handler: async (rc) => ({
        status: 200,
        body: await flows.webauthnRegisterOptions(rc.principal, rc.body, metaOf(rc)),
      }),
    }),
    route({
      method: 'POST',
      path: '/mfa/webauthn/register/verify',
      operationId: 'webauthnRegisterVerify',
      auth: 'bearer',
      body: s.registerVerifyBody,
      summary: 'Register a passkey from its attestation',
      errors: confirmErrors,
      responses: {
        200: {
          description: 'Registered',
          schema: z.object({ credentialId: z.string(), recoveryCodes: z.array(z.string()).optional() }),
        },
      },
      handler: async (rc) => ({
        status: 200,
        body: await flows.webauthnRegisterVerify(rc.principal, rc.body, metaOf(rc)),
      }),
    }),
    route({
      method: 'GET',
      path: '/mfa/webauthn/credentials',
      operationId: 'listPasskeys',
      auth: 'bearer',
      summary: "The caller's passkeys",
      responses: { 200: { description: 'Passkeys, oldest first', schema: s.passkeysAnswer } },
      handler: async ({ principal }) => ({ status: 200, body: await flows.listPasskeys(principal) }),
    }),
    route({
      method: 'DELETE',
      path: '/mfa/webauthn/credentials/:id',
      operationId: 'removePasskey',
      auth: 'bearer',
      body: s.optionalPasswordBody,
      summary: 'Remove one passkey (password required)',
      errors: changeErrors,
      responses: noContent,
      handler: async (rc) => {
        await flows.removePasskey(rc.principal, rc.params.id!, rc.body, metaOf(rc));
        return { status: 204 };
      },
    }),
    route({
      method: 'POST',
      path: '/mfa/recovery-codes',
      operationId: 'regenerateRecoveryCodes',
      auth: 'bearer',
      body: s.optionalPasswordBody,
      summary: 'Replace the recovery codes (password required); the old ones die',
      errors: ['reauth_required', 'rate_limited'],
      responses: { 200: { description: 'New codes, shown once', schema: s.recoveryCodesSchema } },
      handler: async (rc) => ({
        status: 200,
        body: await flows.regenerateRecoveryCodes(rc.principal, rc.body, metaOf(rc)),
      }),
    }),
    route({
      method: 'DELETE',
      path: '/mfa/:method',
      operationId: 'disableMfaMethod',
      params: methodParam,
      auth: 'bearer',
      body: s.optionalPasswordBody,
      summary: 'Remove a method, `totp`, `email` or `webauthn` (every passkey) (password required)',
      errors: changeErrors,
      responses: noContent,
      // The router matched `params` already: `method` is one of the three.
      handler: async (rc) => {
        await flows.disableMfaMethod(rc.principal, rc.params.method as MfaMethod, rc.body, metaOf(rc));
        return { status: 204 };
      },
    }),
    ...(env.cfg.required ? enrolAtLoginRoutes(flows) : []),
  ];
  return { area: 'auth', library: 'mfa', routes };
}

const sessionWithCodes = {
  200: {
    description: 'Session, and the recovery codes of the first method',
    schema: s.sessionSchema.extend({ recoveryCodes: z.array(z.string()).optional() }),
  },
};

/** `mfa.required`: a login without a method enrols its first one with the pending token. */
function enrolAtLoginRoutes(flows: MfaFlows): RouteDef[] {
  return [
    route({
      method: 'POST',
      path: '/mfa/enrol/totp/setup',
      operationId: 'enrolTotpSetup',
      auth: 'none',
      body: s.mfaTokenBody,
      summary: 'mfa.required: start TOTP enrolment during a login without a method',
      responses: { 200: { description: 'Seed', schema: s.totpSeedAnswer } },
      errors: ['invalid_token', 'not_found'],
      handler: async (rc) => ({ status: 200, body: await flows.enrolTotpSetup(rc.body, metaOf(rc)) }),
    }),
    route({
      method: 'POST',
      path: '/mfa/enrol/totp/confirm',
      operationId: 'enrolTotpConfirm',
      refreshCookie: 'sets',
      auth: 'none',
      body: s.mfaTokenCodeBody,
      summary: 'mfa.required: confirm TOTP and complete the login',
      errors: enrolConfirmErrors,
      responses: sessionWithCodes,
      handler: async (rc) => ({ status: 200, body: await flows.enrolTotpConfirm(rc.body, metaOf(rc)) }),
    }),
    route({
      method: 'POST',
      path: '/mfa/enrol/email/setup',
      operationId: 'enrolEmailSetup',
      auth: 'none',
      body: s.mfaTokenBody,
      summary: 'mfa.required: mail an enrolment code during a login without a method',
      errors: ['invalid_token', 'not_found', 'rate_limited'],
      responses: accepted,
      handler: async (rc) => {
        await flows.enrolEmailSetup(rc.body, metaOf(rc));
        return { status: 202, body: { accepted: true } };
      },
    }),
    route({
      method: 'POST',
      path: '/mfa/enrol/email/confirm',
      operationId: 'enrolEmailConfirm',
      refreshCookie: 'sets',
      auth: 'none',
      body: s.mfaTokenCodeBody,
      summary: 'mfa.required: confirm the email method and complete the login',
      errors: enrolConfirmErrors,
      responses: sessionWithCodes,
      handler: async (rc) => ({ status: 200, body: await flows.enrolEmailConfirm(rc.body, metaOf(rc)) }),
    }),
    route({
      method: 'POST',
      path: '/mfa/enrol/webauthn/options',
      operationId: 'enrolPasskeyOptions',
      auth: 'none',
      body: s.mfaTokenBody,
      summary: 'mfa.required: passkey creation options during a login without a method',
      errors: ['invalid_token', 'not_found', 'rate_limited'],
      responses: {
        200: { description: 'PublicKeyCredentialCreationOptionsJSON', schema: s.creationOptionsAnswer },
      },
      handler: async (rc) => ({ status: 200, body: await flows.enrolPasskeyOptions(rc.body, metaOf(rc)) }),
    }),
    route({
      method: 'POST',
      path: '/mfa/enrol/webauthn/verify',
      operationId: 'enrolPasskeyVerify',
      refreshCookie: 'sets',
      auth: 'none',
      body: s.enrolPasskeyBody,
      summary: 'mfa.required: register a passkey and complete the login',
      errors: enrolConfirmErrors,
      responses: {
        200: {
          description: 'Session, the new passkey and the recovery codes',
          schema: sessionWithCodes[200].schema.extend({ credentialId: z.string() }),
        },
      },
      handler: async (rc) => ({ status: 200, body: await flows.enrolPasskeyVerify(rc.body, metaOf(rc)) }),
    }),
  ];
}
