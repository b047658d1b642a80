import type { z } from 'zod';
import { validate } from '../http/handle.js';
import { routeOf } from '../http/route-table.js';
import type { RouteDef, RouteTable } from '../http/types.js';
import type { AuthFlows } from './api.js';
import { metaOf } from './log.js';
import * as s from './schemas.js';

const ok = (description: string, schema?: z.ZodType) => ({ description, schema });

/** A route of this table: its `operationId` names a function of `ph.auth`, and its
 *  handler's body is typed by its `body` schema. */
const route = routeOf<AuthFlows>();

/** The auth routes (area `auth`, run by `ph.auth`): each handler is the library function its
 *  `operationId` names, with the request's metadata: one flow, two entrances. Routes switched
 *  off in the options are left out. */
export function authRoutes(
  api: AuthFlows,
  opts: { signup: boolean; emailVerification: boolean; emailChange: boolean },
): RouteTable {
  const routes: RouteDef[] = [
    route({
      method: 'GET',
      path: '/me',
      operationId: 'me',
      auth: 'bearer',
      summary: 'The authenticated user',
      responses: { 200: ok('The user', s.meAnswer) },
      handler: async (rc) => ({ status: 200, body: await api.me(rc.principal) }),
    }),
    route({
      method: 'GET',
      path: '/roles',
      operationId: 'roles',
      auth: 'bearer',
      summary: 'Roles of the authenticated user',
      responses: { 200: ok('The roles', s.rolesAnswer) },
      handler: async (rc) => ({ status: 200, body: await api.roles(rc.principal) }),
    }),
    route({
      method: 'POST',
      path: '/login',
      operationId: 'login',
      auth: 'none',
      body: s.loginBody,
      refreshCookie: 'sets',
      summary:
        "Log in with email and password (`refreshToken: 'cookie'`: a browser session, the refresh token in an HttpOnly cookie)",
      errors: ['invalid_credentials', 'rate_limited'],
      responses: {
        200: ok(
          'A session, or `{ mfaRequired, mfaToken, methods }` when MFA is on',
          s.sessionAnswer.or(s.mfaRequiredAnswer),
        ),
      },
      handler: async (rc) => ({ status: 200, body: await api.login(rc.body, metaOf(rc)) }),
    }),
    route({
      method: 'POST',
      path: '/refresh',
      operationId: 'refresh',
      auth: 'none',
      body: s.refreshRequestBody,
      refreshCookie: 'rotates',
      summary:
        'Exchange a refresh token for a new pair (rotation); with `{}`, the refresh cookie of a browser session',
      errors: ['invalid_token', 'csrf_refused', 'rate_limited'],
      responses: {
        200: ok(
          'A session with a new refresh token (a browser session: in `Set-Cookie`, not in the body)',
          s.sessionAnswer,
        ),
      },
      handler: async (rc) => ({
        status: 200,
        body: await api.refresh(validate(s.refreshBody, rc.body), metaOf(rc)),
      }),
    }),
    route({
      method: 'POST',
      path: '/logout',
      operationId: 'logout',
      auth: 'none',
      body: s.logoutRequestBody,
      refreshCookie: 'ends',
      summary: 'End the session of a refresh token; with `{}`, that of the refresh cookie (then cleared)',
      errors: ['invalid_token', 'csrf_refused'],
      responses: { 204: ok('Session ended') },
      handler: async (rc) => {
        await api.logout(validate(s.logoutBody, rc.body), metaOf(rc));
        return { status: 204 };
      },
    }),
    route({
      method: 'POST',
      path: '/forgot',
      operationId: 'forgot',
      auth: 'none',
      body: s.forgotBody,
      summary: 'Mail a password-reset code (same answer for unknown emails)',
      responses: { 202: ok('Accepted', s.acceptedAnswer) },
      handler: async (rc) => ({ status: 202, body: await api.forgot(rc.body, metaOf(rc)) }),
    }),
    route({
      method: 'POST',
      path: '/forgot-reset',
      operationId: 'forgotReset',
      auth: 'none',
      body: s.forgotResetBody,
      summary: 'Set a new password with the mailed code',
      errors: ['invalid_code', 'rate_limited'],
      responses: { 204: ok('Password changed; every session ended') },
      handler: async (rc) => {
        await api.forgotReset(rc.body, metaOf(rc));
        return { status: 204 };
      },
    }),
    route({
      method: 'POST',
      path: '/password',
      operationId: 'changePassword',
      auth: 'bearer',
      body: s.changePasswordBody,
      summary: 'Change the password (other sessions end unless keepOtherSessions)',
      errors: ['invalid_credentials', 'rate_limited'],
      responses: { 204: ok('Password changed') },
      handler: async (rc) => {
        await api.changePassword(rc.principal, rc.body, metaOf(rc));
        return { status: 204 };
      },
    }),
    route({
      method: 'GET',
      path: '/sessions',
      operationId: 'listSessions',
      auth: 'bearer',
      summary: "The caller's live sessions",
      responses: { 200: ok('Sessions, newest first', s.sessionsAnswer) },
      handler: async (rc) => ({ status: 200, body: await api.listSessions(rc.principal) }),
    }),
    route({
      method: 'DELETE',
      path: '/sessions',
      operationId: 'revokeOtherSessions',
      auth: 'bearer',
      body: s.reauthBody,
      summary: 'End every other session (fresh login or password needed)',
      errors: ['reauth_required', 'rate_limited'],
      responses: { 204: ok('Other sessions ended') },
      handler: async (rc) => {
        await api.revokeOtherSessions(rc.principal, rc.body ?? {}, metaOf(rc));
        return { status: 204 };
      },
    }),
    route({
      method: 'DELETE',
      path: '/sessions/:id',
      operationId: 'revokeSession',
      auth: 'bearer',
      body: s.reauthBody,
      summary: 'End one of your sessions (fresh login or password needed)',
      errors: ['reauth_required', 'not_found', 'rate_limited'],
      responses: { 204: ok('Session ended') },
      handler: async (rc) => {
        await api.revokeSession(rc.principal, rc.params.id!, rc.body ?? {}, metaOf(rc));
        return { status: 204 };
      },
    }),
  ];
  if (opts.emailVerification)
    routes.push(
      route({
        method: 'POST',
        path: '/verify-email/send',
        operationId: 'sendVerificationEmail',
        auth: 'bearer',
        body: s.emptyBody,
        summary: 'Mail a code that confirms your email address',
        errors: ['nothing_to_resend', 'rate_limited'],
        responses: { 202: ok('Mailed (409 `nothing_to_resend` once confirmed)', s.acceptedAnswer) },
        handler: async (rc) => ({
          status: 202,
          body: await api.sendVerificationEmail(rc.principal, metaOf(rc)),
        }),
      }),
      route({
        method: 'POST',
        path: '/verify-email',
        operationId: 'verifyEmail',
        auth: 'bearer',
        body: s.verifyEmailBody,
        summary: 'Confirm your email address with the mailed code',
        errors: ['invalid_code', 'rate_limited'],
        responses: { 200: ok('The user, `emailVerified: true`', s.meAnswer) },
        handler: async (rc) => ({
          status: 200,
          body: await api.verifyEmail(rc.principal, rc.body, metaOf(rc)),
        }),
      }),
    );
  if (opts.emailChange)
    routes.push(
      route({
        method: 'POST',
        path: '/email',
        operationId: 'requestEmailChange',
        auth: 'bearer',
        body: s.changeEmailBody,
        summary: 'Change your email address: mails a code to the new one (password required)',
        errors: ['reauth_required', 'email_taken', 'rate_limited'],
        responses: { 202: ok('Mailed to the new address', s.acceptedAnswer) },
        handler: async (rc) => ({
          status: 202,
          body: await api.requestEmailChange(rc.principal, rc.body, metaOf(rc)),
        }),
      }),
      route({
        method: 'POST',
        path: '/email/confirm',
        operationId: 'confirmEmailChange',
        auth: 'bearer',
        body: s.confirmEmailChangeBody,
        summary: 'Switch to the new email address with the code mailed there',
        errors: ['invalid_code', 'email_taken', 'rate_limited'],
        responses: { 200: ok('The user with the new, confirmed address', s.meAnswer) },
        handler: async (rc) => ({
          status: 200,
          body: await api.confirmEmailChange(rc.principal, rc.body, metaOf(rc)),
        }),
      }),
    );
  if (opts.signup)
    routes.splice(4, 0, {
      method: 'POST',
      path: '/signup',
      operationId: 'signup',
      auth: 'none',
      body: s.signupBody,
      summary: 'Register an account',
      errors: ['email_taken', 'rate_limited'],
      responses: { 201: ok('Registered', s.signupAnswer) },
      handler: async (rc) => ({ status: 201, body: await api.signup(rc.body, metaOf(rc)) }),
    });
  return { area: 'auth', library: 'auth', routes };
}
