// `ph.auth` as a declared interface: what a host reads on hover and in the d.ts, checked
// against the functions `createAuthApi` builds (postern.ts assigns one to the other).
import type { z } from 'zod';
import type { MfaRequiredAnswer, SessionAnswer } from '../context.js';
import type { Principal } from '../http/types.js';
import type { RequestMeta } from '../util/security-log.js';
import type * as s from './schemas.js';

type In<T extends z.ZodType> = z.input<T>;
type Out<T extends z.ZodType> = z.output<T>;

export type SignupInput = In<typeof s.signupBody>;
export type LoginInput = In<typeof s.loginBody>;
export type RefreshInput = In<typeof s.refreshBody>;
export type LogoutInput = In<typeof s.logoutBody>;
export type ForgotInput = In<typeof s.forgotBody>;
export type ForgotResetInput = In<typeof s.forgotResetBody>;
export type ChangePasswordInput = In<typeof s.changePasswordBody>;
export type VerifyEmailInput = In<typeof s.verifyEmailBody>;
export type RequestEmailChangeInput = In<typeof s.changeEmailBody>;
export type ConfirmEmailChangeInput = In<typeof s.confirmEmailChangeBody>;
/** A password standing in for a recent login (session revocation, MFA changes). */
export type PasswordInput = In<typeof s.reauthBody>;

export type SignupAnswer = Out<typeof s.signupAnswer>;
/** The account as `GET /auth/me` shows it. */
export type MeAnswer = Out<typeof s.meAnswer>;
export type RolesAnswer = Out<typeof s.rolesAnswer>;
export type AcceptedAnswer = Out<typeof s.acceptedAnswer>;
export type SessionsAnswer = Out<typeof s.sessionsAnswer>;

/** `ph.auth`: every auth flow as a plain async function, input validated exactly as over HTTP
 *  (a bad input rejects with 400 `validation_failed`; nothing throws synchronously). `meta`
 *  (`ip`, `userAgent`) goes into the log lines and the per-address limits; without `meta.ip`
 *  those limits are skipped. Flows that act for a signed-in user take its `Principal` first
 *  (from `requireAuth` or `verifyAccessToken`). */
export interface AuthApi {
  /** `POST /auth/signup`: creates an account. */
  signup(input: SignupInput, meta?: RequestMeta): Promise<SignupAnswer>;
  /** `POST /auth/login`: a session, or `{ mfaRequired, mfaToken }` to finish with `ph.mfa`. */
  login(input: LoginInput, meta?: RequestMeta): Promise<SessionAnswer | MfaRequiredAnswer>;
  /** `POST /auth/refresh`: rotates the refresh token. */
  refresh(input: RefreshInput, meta?: RequestMeta): Promise<SessionAnswer>;
  /** `POST /auth/logout`: ends the refresh token's session. */
  logout(input: LogoutInput, meta?: RequestMeta): Promise<void>;
  /** `POST /auth/forgot`: mails a reset code when the address has an account (same answer either way). */
  forgot(input: ForgotInput, meta?: RequestMeta): Promise<AcceptedAnswer>;
  /** `POST /auth/forgot-reset`: sets a new password with the mailed code; every session ends. */
  forgotReset(input: ForgotResetInput, meta?: RequestMeta): Promise<void>;
  /** `GET /auth/me`. */
  me(principal: Principal): Promise<MeAnswer>;
  /** Mails a code that proves the user's address (409 `nothing_to_resend` once proven). */
  sendVerificationEmail(principal: Principal, meta?: RequestMeta): Promise<AcceptedAnswer>;
  /** Marks the address proven with the mailed code; answers like `me`. */
  verifyEmail(principal: Principal, input: VerifyEmailInput, meta?: RequestMeta): Promise<MeAnswer>;
  /** Mails a code to `newEmail` (the password is required). */
  requestEmailChange(
    principal: Principal,
    input: RequestEmailChangeInput,
    meta?: RequestMeta,
  ): Promise<AcceptedAnswer>;
  /** Switches the account to `newEmail` with the code mailed there; answers like `me`. */
  confirmEmailChange(
    principal: Principal,
    input: ConfirmEmailChangeInput,
    meta?: RequestMeta,
  ): Promise<MeAnswer>;
  /** `GET /auth/roles`. */
  roles(principal: Principal): Promise<RolesAnswer>;
  /** `POST /auth/password`: other sessions end unless `keepOtherSessions`. */
  changePassword(principal: Principal, input: ChangePasswordInput, meta?: RequestMeta): Promise<void>;
  /** The caller's live sessions. */
  listSessions(principal: Principal): Promise<SessionsAnswer>;
  /** Ends one of the caller's sessions; needs a fresh login or `password`. */
  revokeSession(principal: Principal, sid: string, input?: PasswordInput, meta?: RequestMeta): Promise<void>;
  /** Ends every session of the caller but the current one; needs a fresh login or `password`. */
  revokeOtherSessions(principal: Principal, input?: PasswordInput, meta?: RequestMeta): Promise<void>;
  /** For the host's own sensitive routes, as the MFA and session routes use it: passes when
   *  the session's login is at most 10 minutes old or `password` is right, else 403
   *  `reauth_required`; a wrong password counts as a failed login. `requirePassword` ignores
   *  the login's age. */
  requireFreshAuth(
    principal: Principal,
    input?: NonNullable<PasswordInput> & { requirePassword?: boolean },
    meta?: RequestMeta,
  ): Promise<void>;
  /** Admin: ends every session of one user, or of everyone. */
  revokeSessions(target: { userId: string } | { all: true }): Promise<{ revoked: number }>;
  /** Admin: its sessions end now and it cannot log in until enabled. */
  disableUser(userId: string): Promise<void>;
  /** Admin: lets a disabled user log in again. */
  enableUser(userId: string): Promise<void>;
  /** Admin: ends every session, then deletes the account. */
  deleteUser(userId: string): Promise<void>;
  /** Admin: replaces the user's roles (404 `not_found` for an unknown user). */
  setRoles(userId: string, roles: string[]): Promise<void>;
  /** The one library call that checks an access token (the adapters' `requireAuth` guards
   *  routes): signature, claims and ended session, 401 `invalid_token` otherwise. `meta` goes
   *  into the log line of a refused token. */
  verifyAccessToken(token: string, meta?: RequestMeta): Promise<Principal>;
}
