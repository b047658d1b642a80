import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import type { MfaMethod, SessionAnswer } from '../context.js';
import { PosternError } from '../errors.js';
import { ipOf, type RequestMeta } from '../util/security-log.js';
import type { MfaEnv } from './env.js';
import {
  assertAllowed,
  confirmEmail,
  confirmPasskey,
  confirmTotp,
  factorAdded,
  startEmail,
  startPasskey,
  startTotp,
} from './factor-setup.js';
import { enabledMethods } from './factors.js';
import { completeLogin } from './login.js';
import { type OpenPending, openPending, runFactorCheck, usedOrWrong } from './pending.js';

// `mfa.required`: a user without a method logs in with the password and gets a pending token
// with `methods: []`. That token can only enrol a first method here; the confirming step
// completes the login. It never works once the user has a method (a password alone must not
// add a factor to an account that already has one).

async function assertEnrolling(env: MfaEnv, p: OpenPending): Promise<void> {
  if (p.pending.methods.length > 0 || (await enabledMethods(env, p.user.id)).length > 0)
    throw new PosternError('invalid_token');
}

async function open(env: MfaEnv, token: string, method: MfaMethod): Promise<OpenPending> {
  assertAllowed(env, method);
  const p = await openPending(env, token);
  await assertEnrolling(env, p);
  return p;
}

/** Completes the login after the first factor was confirmed: recovery codes, other sessions
 *  ended, owner mailed, then the session. */
async function enrolled(
  env: MfaEnv,
  opened: OpenPending,
  method: MfaMethod,
  meta: RequestMeta,
): Promise<SessionAnswer & { recoveryCodes?: string[] }> {
  const added = await factorAdded(env, opened.user, method, false, undefined, meta);
  const session = await completeLogin(env, opened, method === 'webauthn' ? 'webauthn' : method, meta);
  return { ...session, ...added };
}

async function confirmWith(
  env: MfaEnv,
  mfaToken: string,
  meta: RequestMeta,
  method: MfaMethod,
  confirm: (p: OpenPending) => Promise<boolean>,
) {
  assertAllowed(env, method);
  const opened = await runFactorCheck(env, mfaToken, meta, `enrol_${method}`, async (p) => {
    await assertEnrolling(env, p);
    return usedOrWrong(await confirm(p));
  });
  return enrolled(env, opened, method, meta);
}

export async function enrolTotpSetup(env: MfaEnv, input: { mfaToken: string }) {
  return startTotp(env, (await open(env, input.mfaToken, 'totp')).user);
}

export function enrolTotpConfirm(env: MfaEnv, input: { mfaToken: string; code: string }, meta: RequestMeta) {
  return confirmWith(env, input.mfaToken, meta, 'totp', (p) => confirmTotp(env, p.user, input.code));
}

export async function enrolEmailSetup(env: MfaEnv, input: { mfaToken: string }): Promise<void> {
  await startEmail(env, (await open(env, input.mfaToken, 'email')).user);
}

export function enrolEmailConfirm(env: MfaEnv, input: { mfaToken: string; code: string }, meta: RequestMeta) {
  return confirmWith(env, input.mfaToken, meta, 'email', (p) => confirmEmail(env, p.user, input.code));
}

export async function enrolPasskeyOptions(env: MfaEnv, input: { mfaToken: string }, meta: RequestMeta) {
  await env.ctx.throttle.hit('webauthn:ip', ipOf(meta));
  return startPasskey(env, (await open(env, input.mfaToken, 'webauthn')).user);
}

export async function enrolPasskeyVerify(
  env: MfaEnv,
  input: { mfaToken: string; attestationResponse: RegistrationResponseJSON; name?: string },
  meta: RequestMeta,
) {
  let credentialId = '';
  const answer = await confirmWith(env, input.mfaToken, meta, 'webauthn', async (p) => {
    credentialId = (await confirmPasskey(env, p.user, input.attestationResponse, input.name, meta)) ?? '';
    return credentialId !== '';
  });
  return { credentialId, ...answer };
}
