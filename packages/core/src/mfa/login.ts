import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import { credentialsUnchanged } from '../auth/credentials-unchanged.js';
import { noticeAfterFailures } from '../auth/failure-notice.js';
import type { MfaMethod, MfaRequiredAnswer, SessionAnswer } from '../context.js';
import { isPosternError, PosternError } from '../errors.js';
import type { Stores } from '../ports/stores.js';
import type { User } from '../ports/user-store.js';
import { isEmailCode } from '../tokens/email-code.js';
import { ipOf, logAuthEvent, type RequestMeta } from '../util/security-log.js';
import { checkLoginCode, loginCodeKey, sendEmailCode, sendLoginCode } from './email-otp.js';
import { type MfaEnv, nowSeconds } from './env.js';
import { enabledMethods, hasRecoveryCodes, loginMethods } from './factors.js';
import { notifyOwner } from './notify.js';
import {
  type FactorCheck,
  issuePending,
  type OpenPending,
  openPending,
  runFactorCheck,
  usedOrWrong,
  WRONG_CODE,
} from './pending.js';
import { matchRecoveryCode } from './recovery.js';
import { verifyTotp } from './totp.js';
import { authenticationOptions, verifyAuthentication } from './webauthn.js';

export type CodeMethod = 'totp' | 'email' | 'recovery';

/** Starts a pending login for a user whose password was just verified. When email is the
 *  only method, the first code is mailed now. */
export async function beginMfa(
  env: MfaEnv,
  user: User,
  opts: { refresh: boolean | 'cookie'; methods: MfaMethod[]; meta: RequestMeta },
): Promise<MfaRequiredAnswer | null> {
  const userId = user.id;
  const methods = loginMethods(env, user, opts.methods);
  const mailCode =
    methods.length === 1 && methods[0] === 'email' && (await underMailCap(env, user, opts.meta));
  const { token, pending } = await issuePending(env, userId, {
    refresh: opts.refresh,
    methods,
    codeSentAtLogin: mailCode,
  });
  // A reset or change that voided pending logins while the password was being checked
  // missed this one: void it now (before any code is mailed); the login refuses.
  if (!(await credentialsUnchanged(env.ctx.stores, user))) {
    await env.ctx.stores.pendingLogins.consume(pending.jti, env.ctx.clock.now());
    return null;
  }
  if (methods.length === 0) {
    // Only with `mfa.required`: this pending login can enrol a first method, nothing else.
    if (!env.cfg.required) throw new Error('begin() needs at least one method unless mfa.required');
    challenged(env, { reason: 'enrolment_required', userId, methods: [] }, opts.meta);
    return { mfaRequired: true, mfaToken: token, methods: [], enrol: [...env.cfg.methods] };
  }
  if (mailCode) await sendEmailCode(env, user, loginCodeKey(pending.jti));
  const offered: MfaRequiredAnswer['methods'] = [...methods];
  if (await hasRecoveryCodes(env, userId)) offered.push('recovery');
  challenged(env, { userId, methods: offered }, opts.meta);
  return { mfaRequired: true, mfaToken: token, methods: offered };
}

/** A login of an email-only user mails a code, counted per user with every other code mail
 *  (`mail:user`), so whoever has the password cannot flood the owner's mailbox by logging in.
 *  Over the cap the login still answers its pending token (the password was right; a 429 would
 *  lock the owner out of the second step for the window) but mails nothing, and says so in a
 *  warning; the resend routes then answer 429 with `Retry-After` until the window ends. */
async function underMailCap(env: MfaEnv, user: User, meta: RequestMeta): Promise<boolean> {
  try {
    await env.ctx.throttle.hit('mail:user', user.id);
    return true;
  } catch (e) {
    if (!isPosternError(e) || e.code !== 'rate_limited') throw e;
    logAuthEvent(
      env.ctx.logger,
      'warn',
      { event: 'mfa_code_not_mailed', outcome: 'failure', reason: 'mail:user', userId: user.id },
      meta,
    );
    return false;
  }
}

function challenged(
  env: MfaEnv,
  e: { reason?: string; userId: string; methods: string[] },
  meta: RequestMeta,
): void {
  logAuthEvent(env.ctx.logger, 'info', { event: 'mfa_challenge', outcome: 'pending', ...e }, meta);
}

const AMR: Record<CodeMethod | 'webauthn', string[]> = {
  totp: ['pwd', 'otp', 'mfa'],
  email: ['pwd', 'otp', 'mfa'],
  recovery: ['pwd', 'mfa'],
  webauthn: ['pwd', 'hwk', 'mfa'],
};

/** Issues the session that ends a pending login (already consumed). */
export async function completeLogin(
  env: MfaEnv,
  { pending, user }: OpenPending,
  method: CodeMethod | 'webauthn',
  meta: RequestMeta,
): Promise<SessionAnswer> {
  const issued = await env.ctx.sessions.issue(user, {
    refresh: pending.refresh,
    amr: AMR[method],
    authTime: nowSeconds(env),
    ip: ipOf(meta),
    userAgent: meta.userAgent,
  });
  if (!issued) {
    // The password changed (or the user was disabled) after this pending login was opened.
    logAuthEvent(
      env.ctx.logger,
      'info',
      { event: 'mfa_failed', outcome: 'failure', reason: 'credentials_changed', method, userId: user.id },
      meta,
    );
    throw new PosternError('invalid_token');
  }
  const { sid, answer } = issued;
  await noticeAfterFailures(env.ctx, user, 'mfa', meta);
  logAuthEvent(
    env.ctx.logger,
    'info',
    { event: 'mfa_verified', outcome: 'success', method, userId: user.id, sid },
    meta,
  );
  return answer;
}

/** 400 when the request names a method this login cannot use (no code is checked, nothing
 *  is counted). */
const notOffered = (method: string, path: string) =>
  new PosternError('validation_failed', {
    errors: [{ path, message: `${method} is not a method of this login` }],
  });

function assertOffered(p: OpenPending, method: MfaMethod, path: string): void {
  if (!p.pending.methods.includes(method)) throw notOffered(method, path);
}

/** A TOTP code of a step after the last accepted one; the step is taken once the attempt
 *  holds the pending login. */
async function checkTotp(env: MfaEnv, userId: string, code: string): Promise<FactorCheck> {
  const factor = await env.ctx.stores.mfaFactors.getFactor(userId, 'totp');
  if (!factor?.secret) return WRONG_CODE;
  const seed = env.sealer.open(factor.secret, userId);
  const step = await verifyTotp(seed, code, nowSeconds(env), factor.lastStep ?? -1);
  if (step === null) return WRONG_CODE;
  return { kind: 'right', commit: () => env.ctx.stores.mfaFactors.acceptTotpStep(userId, step) };
}

/** A matching recovery code; it is used up (and the owner told) once the attempt holds the
 *  pending login, so a login another factor won burns none. */
async function checkRecovery(env: MfaEnv, p: OpenPending, code: string): Promise<FactorCheck> {
  const match = await matchRecoveryCode(env, p.user.id, code);
  if (!match) return WRONG_CODE;
  return {
    kind: 'right',
    commit: async () => {
      const left = await match.use();
      if (left === null) return false;
      notifyOwner(env, p.user, { kind: 'recovery_used', remaining: left });
      return true;
    },
  };
}

/** `POST /auth/mfa/verify` (and, with the method fixed, `loginWithEmailCode` and
 *  `verifyRecoveryCode`): completes a pending login with a code. Without `methodType`, a
 *  recovery code is recognised by its shape and a six-digit code is tried as TOTP, then as the
 *  emailed code; either way one wrong answer counts once. `methodField` names the body field an unoffered method is blamed on
 *  (`/auth/login/email-code` has no `methodType`: its token is what is wrong). */
export async function verifyMfa(
  env: MfaEnv,
  input: { token: string; code: string; methodType?: CodeMethod; methodField?: string },
  meta: RequestMeta,
): Promise<SessionAnswer> {
  const code = input.code.trim();
  const field = input.methodField ?? 'methodType';
  let used: CodeMethod = input.methodType ?? 'totp';
  const opened = await runFactorCheck(env, input.token, meta, input.methodType ?? 'auto', async (p) => {
    const offered = p.pending.methods;
    if (input.methodType === 'recovery') {
      // Named, recovery must be a method the user still has (every code used: none).
      if (!(await hasRecoveryCodes(env, p.user.id))) throw notOffered('recovery', field);
      return checkRecovery(env, p, code);
    }
    if (input.methodType) {
      assertOffered(p, input.methodType, field);
      return input.methodType === 'totp'
        ? checkTotp(env, p.user.id, code)
        : checkLoginCode(env, p.pending.jti, code);
    }
    if (!isEmailCode(code)) {
      used = 'recovery';
      return checkRecovery(env, p, code);
    }
    if (offered.includes('totp')) {
      const totp = await checkTotp(env, p.user.id, code);
      if (totp.kind !== 'wrong') {
        used = 'totp';
        return totp;
      }
    }
    if (!offered.includes('email')) return WRONG_CODE;
    const email = await checkLoginCode(env, p.pending.jti, code);
    if (email.kind !== 'wrong') used = 'email';
    return email;
  });
  return completeLogin(env, opened, used, meta);
}

/** `POST /auth/login/email-code`: `verifyMfa` with the emailed code; a login that does not
 *  offer the email method is blamed on its token. */
export const loginWithEmailCode = (env: MfaEnv, input: { token: string; code: string }, meta: RequestMeta) =>
  verifyMfa(env, { ...input, methodType: 'email', methodField: 'token' }, meta);

/** `POST /auth/mfa/recovery`: `verifyMfa` with a recovery code. */
export const verifyRecoveryCode = (env: MfaEnv, input: { token: string; code: string }, meta: RequestMeta) =>
  verifyMfa(env, { ...input, methodType: 'recovery', methodField: 'token' }, meta);

/** `POST /auth/mfa/resend` (and `POST /auth/login/email-code/resend`, `resendLoginCode`):
 *  mails a fresh code for a pending login whose user has the email method (the previous code
 *  dies; failures so far are kept). 409 `nothing_to_resend` otherwise. */
export async function resendCode(env: MfaEnv, input: { token: string }, meta: RequestMeta): Promise<void> {
  const { pending, user } = await openPending(env, input.token, meta);
  if (!pending.methods.includes('email')) throw new PosternError('nothing_to_resend');
  await sendLoginCode(env, pending, user);
}

/** `POST /auth/mfa/webauthn/options`: WebAuthn request options for a pending login. */
export async function webauthnLoginOptions(env: MfaEnv, input: { mfaToken: string }, meta: RequestMeta) {
  await env.ctx.throttle.hit('webauthn:ip', ipOf(meta));
  const p = await openPending(env, input.mfaToken, meta);
  assertOffered(p, 'webauthn', 'mfaToken');
  return authenticationOptions(env, p.user.id, p.pending.jti, p.pending.expiresAt);
}

/** `POST /auth/mfa/webauthn/verify`: completes a pending login with a WebAuthn assertion. A
 *  failed assertion counts as a wrong code; the challenge is gone either way (ask for fresh options). */
export async function webauthnLoginVerify(
  env: MfaEnv,
  input: { mfaToken: string; assertionResponse: AuthenticationResponseJSON },
  meta: RequestMeta,
): Promise<SessionAnswer> {
  const opened = await runFactorCheck(env, input.mfaToken, meta, 'webauthn', async (p) => {
    assertOffered(p, 'webauthn', 'mfaToken');
    return usedOrWrong(
      (await verifyAuthentication(env, p.user.id, p.pending.jti, input.assertionResponse, meta)) !== null,
    );
  });
  return completeLogin(env, opened, 'webauthn', meta);
}

/** The gate the auth area's login calls. */
export function createMfaGate(env: MfaEnv) {
  return {
    methods: (userId: string) => enabledMethods(env, userId),
    begin: (user: User, opts: { refresh: boolean | 'cookie'; methods: MfaMethod[]; meta: RequestMeta }) =>
      beginMfa(env, user, opts),
    async voidPending(userId: string, stores: Stores = env.ctx.stores) {
      await stores.pendingLogins.voidForUser(userId);
    },
    required: env.cfg.required,
  };
}
