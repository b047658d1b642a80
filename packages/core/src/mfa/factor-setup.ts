import { randomBytes } from 'node:crypto';
import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import { emailCodeMatches, useEmailCode } from '../auth/mailed-code.js';
import type { MfaMethod, ThrottleBucket } from '../context.js';
import { isPosternError, PosternError } from '../errors.js';
import type { User } from '../ports/user-store.js';
import { logAuthEvent, type RequestMeta } from '../util/security-log.js';
import { enrolCodeKey, sendEmailCode } from './email-otp.js';
import { addSeconds, type MfaEnv, nowSeconds } from './env.js';
import { type MfaNotice, notifyOwner } from './notify.js';
import { type FirstCodes, firstRecoveryCodes, NO_CODES } from './recovery.js';
import { otpauthUri, TOTP_SEED_BYTES, verifyTotp } from './totp.js';
import { registrationOptions, verifyRegistration } from './webauthn.js';

// Adding a factor, whoever asks: a signed-in user (enrol.ts) or, with `mfa.required`, a login
// that must enrol before it gets a session (enrol-at-login.ts). Callers check who may. Each
// step has the name of the flow (and route operationId) of a signed-in user's enrolment.

/** A TOTP seed from setup waits this long for its first code. */
const TOTP_SETUP_SECONDS = 900;

export function assertAllowed(env: MfaEnv, method: MfaMethod): void {
  if (!env.cfg.methods.has(method)) throw new PosternError('not_found');
}

export async function totpSetup(env: MfaEnv, user: User) {
  const seed = new Uint8Array(randomBytes(TOTP_SEED_BYTES));
  await env.ctx.stores.mfaFactors.savePendingTotp({
    userId: user.id,
    secret: env.sealer.seal(seed, user.id),
    expiresAt: addSeconds(env.ctx.clock.now(), TOTP_SETUP_SECONDS),
  });
  const otpauth = otpauthUri(seed, env.cfg.totpIssuer, user.email);
  return { secret: new URL(otpauth).searchParams.get('secret')!, otpauthUri: otpauth };
}

/** A confirmed factor and the recovery codes stored with it (a first factor's; null for a
 *  later one, or when a parallel first factor stored its set first); `false`: not confirmed. */
export type Confirmed = false | { recoveryCodes: string[] | null };

/** The recovery codes a confirmation stores with its factor: a first factor's, hashed once
 *  its code is known to be right. */
const codesFor = (env: MfaEnv, user: User, first: boolean): Promise<FirstCodes> =>
  first ? firstRecoveryCodes(env, user.id) : Promise.resolve(NO_CODES);

/** Turns the pending seed into the active factor when `code` matches it (atomic, once), in one
 *  transaction with the recovery codes of a first factor. */
export async function totpConfirm(env: MfaEnv, user: User, code: string, first: boolean): Promise<Confirmed> {
  const now = env.ctx.clock.now();
  const pending = await env.ctx.stores.mfaFactors.getPendingTotp(user.id, now);
  if (!pending) return false;
  const step = await verifyTotp(env.sealer.open(pending.secret, user.id), code.trim(), nowSeconds(env));
  if (step === null) return false;
  const codes = await codesFor(env, user, first);
  return env.ctx.stores.transaction(async (tx) =>
    (await tx.mfaFactors.confirmPendingTotp(user.id, pending.secret, step, now))
      ? { recoveryCodes: await codes.store(tx) }
      : false,
  );
}

export async function emailSetup(env: MfaEnv, user: User): Promise<void> {
  await env.ctx.throttle.hit('resend', `email-setup:${user.id}`);
  // Setup mails an address no one has proven yet: a few per hour, not one per 30 s all day.
  await env.ctx.throttle.hit('mail:user', user.id);
  await sendEmailCode(env, user, enrolCodeKey(user.id), 'enrol');
}

/** Enables the email factor when `code` is the mailed enrolment code (atomic, once). The
 *  caller counts the attempt as an MFA code (`code:user`). The mailed code coming back also
 *  proves the address, but only within the daily budget of email verification (`confirm:user`),
 *  which enrolment must not be a way around: while the address is unproven each attempt counts
 *  there too, and once that budget is spent the factor is still enabled (under the MFA code
 *  limits alone) but the address is not marked proven. No live code (a parallel copy used it, it
 *  expired, none was sent) is thrown, so the caller gives its point back: nothing was guessed. */
export async function emailConfirm(
  env: MfaEnv,
  user: User,
  code: string,
  first: boolean,
): Promise<Confirmed> {
  const mailed = { userId: user.id, key: enrolCodeKey(user.id) };
  const proving = user.emailVerified ? null : await takeIfUnder(env, ['confirm:user', user.id]);
  // Recovery codes are hashed only for a code that is right now; the use below still decides.
  const codes =
    first && (await emailCodeMatches(env.ctx, mailed, code)) ? await codesFor(env, user, true) : NO_CODES;
  let recoveryCodes: string[] | null = null;
  const r = await useEmailCode(env.ctx, mailed, code, {
    count: [],
    onRight: async (tx) => {
      await tx.mfaFactors.enableFactor({ userId: user.id, type: 'email', enabledAt: env.ctx.clock.now() });
      if (proving) await tx.users.markEmailVerified(user.id);
      recoveryCodes = await codes.store(tx);
    },
  });
  if (proving && r !== 'wrong') await proving.release();
  if (r === 'gone') throw new PosternError('invalid_code');
  return r === 'used' && { recoveryCodes };
}

/** A limiter point when the bucket has one left; null when it is spent (not an error here). */
async function takeIfUnder(env: MfaEnv, entry: readonly [ThrottleBucket, string]) {
  try {
    return await env.ctx.throttle.take(entry);
  } catch (e) {
    if (isPosternError(e) && e.code === 'rate_limited') return null;
    throw e;
  }
}

export const webauthnRegisterOptions = registrationOptions;

/** Stores the credential when the attestation verifies, in one transaction with the recovery
 *  codes of a first factor; its id with the codes, or null. */
export async function webauthnRegisterVerify(
  env: MfaEnv,
  user: User,
  attestation: RegistrationResponseJSON,
  name: string | undefined,
  meta: RequestMeta,
  first: boolean,
): Promise<{ credentialId: string; recoveryCodes: string[] | null } | null> {
  const cred = await verifyRegistration(env, user, attestation, name ?? 'Passkey', meta);
  if (!cred) return null;
  const codes = await codesFor(env, user, first);
  return env.ctx.stores.transaction(async (tx) => {
    if (!(await tx.webauthnCredentials.addCredential(cred)))
      throw new PosternError('validation_failed', {
        errors: [{ path: 'attestationResponse', message: 'this credential is already registered' }],
      });
    return { credentialId: cred.id, recoveryCodes: await codes.store(tx) };
  });
}

/** After a change: the user's other sessions end (option; all of them when `exceptSid` is
 *  absent), the owner is mailed, the change is logged. */
export async function afterFactorChange(
  env: MfaEnv,
  user: User,
  exceptSid: string | undefined,
  notice: MfaNotice,
  meta: RequestMeta,
) {
  if (env.cfg.endSessionsOnChange)
    await env.ctx.sessions.endAll(user.id, { exceptSid, reason: 'mfa_change' });
  notifyOwner(env, user, notice);
  logAuthEvent(
    env.ctx.logger,
    'info',
    {
      event:
        notice.kind === 'removed' ? 'mfa_removed' : notice.kind === 'added' ? 'mfa_enrolled' : 'mfa_recovery',
      outcome: 'success',
      method: 'method' in notice ? notice.method : 'recovery',
      userId: user.id,
      sid: exceptSid,
    },
    meta,
  );
}

/** A factor was just confirmed (with its recovery codes when it was the first one, MFA
 *  turning on): other sessions end, the owner is told, the codes are shown once. */
export async function factorAdded(
  env: MfaEnv,
  user: User,
  method: MfaMethod,
  recoveryCodes: string[] | null,
  exceptSid: string | undefined,
  meta: RequestMeta,
): Promise<{ recoveryCodes?: string[] }> {
  await afterFactorChange(env, user, exceptSid, { kind: 'added', method }, meta);
  return recoveryCodes ? { recoveryCodes } : {};
}
