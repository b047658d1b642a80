import type { z } from 'zod';
import { validate } from '../http/handle.js';
import type { Principal } from '../http/types.js';
import { validated, validatedFor } from '../util/validated.js';
import { createAdmin, me, roles } from './account.js';
import type { BearerCheck } from './bearer-check.js';
import type { AuthDeps } from './deps.js';
import { confirmEmailChange, requestEmailChange } from './email-change.js';
import { sendVerificationEmail, verifyEmail } from './email-verification.js';
import type { RequestMeta } from './log.js';
import { login } from './login.js';
import { changePassword } from './password-change.js';
import { requireFreshAuth } from './reauth.js';
import { forgot, forgotReset } from './reset.js';
import * as s from './schemas.js';
import type { SessionService } from './sessions.js';
import { signup } from './signup.js';

type In<T extends z.ZodType> = z.input<T>;
type Out<T extends z.ZodType> = z.output<T>;

/** Every auth flow with already-validated input (what the routes call). */
export function createAuthFlows(d: AuthDeps, sessions: SessionService, bearer: BearerCheck) {
  const admin = createAdmin(d);
  return {
    signup: (input: Out<typeof s.signupBody>, meta: RequestMeta = {}) => signup(d, input, meta),
    login: (input: Out<typeof s.loginBody>, meta: RequestMeta = {}) => login(d, sessions, input, meta),
    refresh: (input: Out<typeof s.refreshBody>, meta: RequestMeta = {}) =>
      sessions.refresh(input.refreshToken, meta),
    logout: (input: Out<typeof s.logoutBody>, meta: RequestMeta = {}) =>
      sessions.logout(input.refreshToken, meta),
    forgot: (input: Out<typeof s.forgotBody>, meta: RequestMeta = {}) => forgot(d, input.email, meta),
    forgotReset: (input: Out<typeof s.forgotResetBody>, meta: RequestMeta = {}) =>
      forgotReset(d, input, meta),
    me: (principal: Principal) => me(d, principal),
    /** Mails a code that proves the user's address (409 `nothing_to_resend` once proven). */
    sendVerificationEmail: (principal: Principal, meta: RequestMeta = {}) =>
      sendVerificationEmail(d, principal, meta),
    /** Marks the address proven with the mailed code; answers like `me`. */
    verifyEmail: (principal: Principal, input: Out<typeof s.verifyEmailBody>, meta: RequestMeta = {}) =>
      verifyEmail(d, principal, input, meta),
    /** Mails a code to `newEmail` (the password is required). */
    requestEmailChange: (
      principal: Principal,
      input: Out<typeof s.changeEmailBody>,
      meta: RequestMeta = {},
    ) => requestEmailChange(d, principal, input, meta),
    /** Switches the account to `newEmail` with the code mailed there; answers like `me`. */
    confirmEmailChange: (
      principal: Principal,
      input: Out<typeof s.confirmEmailChangeBody>,
      meta: RequestMeta = {},
    ) => confirmEmailChange(d, principal, input, meta),
    roles: (principal: Principal) => roles(d, principal),
    changePassword: (principal: Principal, input: Out<typeof s.changePasswordBody>, meta: RequestMeta = {}) =>
      changePassword(d, principal, input, meta),
    listSessions: async (principal: Principal) => ({ sessions: await sessions.list(principal) }),
    /** Ends one of the caller's sessions; needs a fresh login or `password`. */
    async revokeSession(
      principal: Principal,
      sid: string,
      input: { password?: string } = {},
      meta: RequestMeta = {},
    ) {
      await requireFreshAuth(d.ctx, principal, input.password, { meta });
      await sessions.revokeOwn(principal, sid, meta);
    },
    /** Ends every session of the caller but the current one; needs a fresh login or `password`. */
    async revokeOtherSessions(
      principal: Principal,
      input: { password?: string } = {},
      meta: RequestMeta = {},
    ) {
      await requireFreshAuth(d.ctx, principal, input.password, { meta });
      await d.ctx.sessions.endAll(principal.userId, { exceptSid: principal.sid, reason: 'revoked_others' });
    },
    /** For the host's own sensitive routes, as the MFA and session routes use it: passes when
     *  the session's login is at most 10 minutes old or `password` is right, else 403
     *  `reauth_required`; a wrong password counts as a failed login. `requirePassword` ignores
     *  the login's age. */
    async requireFreshAuth(
      principal: Principal,
      input: { password?: string; requirePassword?: boolean } = {},
      meta: RequestMeta = {},
    ): Promise<void> {
      await requireFreshAuth(d.ctx, principal, input.password, {
        requirePassword: input.requirePassword,
        meta,
      });
    },
    revokeSessions: admin.revokeSessions,
    disableUser: admin.disableUser,
    enableUser: admin.enableUser,
    deleteUser: admin.deleteUser,
    setRoles: admin.setRoles,
    /** Verifies a Bearer access token (signature, claims, ended session); 401 `invalid_token`. */
    verifyAccessToken: (token: string, meta?: RequestMeta) => bearer.token(token, meta),
  };
}

export type AuthFlows = ReturnType<typeof createAuthFlows>;

/** `ph.auth.*`: the flows as plain async functions, inputs validated exactly as over HTTP (a
 *  bad input rejects, it never throws synchronously). */
export function createAuthApi(flows: AuthFlows) {
  return {
    ...flows,
    signup: validated(s.signupBody, flows.signup),
    login: validated(s.loginBody, flows.login),
    refresh: validated(s.refreshBody, flows.refresh),
    logout: validated(s.logoutBody, flows.logout),
    forgot: validated(s.forgotBody, flows.forgot),
    forgotReset: validated(s.forgotResetBody, flows.forgotReset),
    changePassword: validatedFor(s.changePasswordBody, flows.changePassword),
    verifyEmail: validatedFor(s.verifyEmailBody, flows.verifyEmail),
    requestEmailChange: validatedFor(s.changeEmailBody, flows.requestEmailChange),
    confirmEmailChange: validatedFor(s.confirmEmailChangeBody, flows.confirmEmailChange),
    revokeSession: async (
      principal: Principal,
      sid: string,
      input?: In<typeof s.reauthBody>,
      meta?: RequestMeta,
    ) => flows.revokeSession(principal, sid, validate(s.reauthBody, input) ?? {}, meta),
    revokeOtherSessions: async (principal: Principal, input?: In<typeof s.reauthBody>, meta?: RequestMeta) =>
      flows.revokeOtherSessions(principal, validate(s.reauthBody, input) ?? {}, meta),
    requireFreshAuth: async (
      principal: Principal,
      input: NonNullable<In<typeof s.reauthBody>> & { requirePassword?: boolean } = {},
      meta?: RequestMeta,
    ) => {
      const { requirePassword, ...body } = input;
      return flows.requireFreshAuth(principal, { ...validate(s.reauthBody, body), requirePassword }, meta);
    },
  };
}
