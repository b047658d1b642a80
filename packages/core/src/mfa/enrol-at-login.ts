import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import type { MfaMethod, SessionAnswer } from '../context.js';
import { PosternError } from '../errors.js';
import { ipOf, type RequestMeta } from '../util/security-log.js';
import type { MfaEnv } from './env.js';
import * as factor from './factor-setup.js';
import { enabledMethods } from './factors.js';
import { completeLogin } from './login.js';
import { type OpenPending, openPending, runFactorCheck, WRONG_CODE } from './pending.js';

// `mfa.required`: a user without a method logs in with the password and gets a pending token
// with `methods: []`. That token can only enrol a first method here; the confirming step
// completes the login. It never works once the user has a method (a password alone must not
// add a factor to an account that already has one).

async function assertEnrolling(env: MfaEnv, p: OpenPending): Promise<void> {
  if (p.pending.methods.length > 0 || (await enabledMethods(env, p.user.id)).length > 0)
    throw new PosternError('invalid_token');
}

async function open(env: MfaEnv, token: string, method: MfaMethod, meta: RequestMeta): Promise<OpenPending> {
  factor.assertAllowed(env, method);
  const p = await openPending(env, token, meta);
  await assertEnrolling(env, p);
  return p;
}

/** Completes the login after the first factor was confirmed: recovery codes, other sessions
 *  ended, owner mailed, then the session. */
async function enrolled(
  env: MfaEnv,
  opened: OpenPending,
  method: MfaMethod,
  recoveryCodes: string[] | null,
  meta: RequestMeta,
): Promise<SessionAnswer & { recoveryCodes?: string[] }> {
  const added = await factor.factorAdded(env, opened.user, method, recoveryCodes, undefined, meta);
  const session = await completeLogin(env, opened, method === 'webauthn' ? 'webauthn' : method, meta);
  return { ...session, ...added };
}

async function confirmWith(
  env: MfaEnv,
  mfaToken: string,
  meta: RequestMeta,
  method: MfaMethod,
  confirm: (p: OpenPending) => Promise<factor.Confirmed>,
) {
  factor.assertAllowed(env, method);
  let recoveryCodes: string[] | null = null;
  const opened = await runFactorCheck(env, mfaToken, meta, `enrol_${method}`, async (p) => {
    await assertEnrolling(env, p);
    const confirmed = await confirm(p);
    if (confirmed === false) return WRONG_CODE;
    recoveryCodes = confirmed.recoveryCodes;
    return { kind: 'used' };
  });
  return enrolled(env, opened, method, recoveryCodes, meta);
}

export async function enrolTotpSetup(env: MfaEnv, input: { mfaToken: string }, meta: RequestMeta) {
  return factor.totpSetup(env, (await open(env, input.mfaToken, 'totp', meta)).user);
}

export function enrolTotpConfirm(env: MfaEnv, input: { mfaToken: string; code: string }, meta: RequestMeta) {
  return confirmWith(env, input.mfaToken, meta, 'totp', (p) =>
    factor.totpConfirm(env, p.user, input.code, true),
  );
}

export async function enrolEmailSetup(
  env: MfaEnv,
  input: { mfaToken: string },
  meta: RequestMeta,
): Promise<void> {
  await factor.emailSetup(env, (await open(env, input.mfaToken, 'email', meta)).user);
}

export function enrolEmailConfirm(env: MfaEnv, input: { mfaToken: string; code: string }, meta: RequestMeta) {
  return confirmWith(env, input.mfaToken, meta, 'email', (p) =>
    factor.emailConfirm(env, p.user, input.code, true),
  );
}

export async function enrolPasskeyOptions(env: MfaEnv, input: { mfaToken: string }, meta: RequestMeta) {
  await env.ctx.throttle.hit('webauthn:ip', ipOf(meta));
  return factor.webauthnRegisterOptions(env, (await open(env, input.mfaToken, 'webauthn', meta)).user);
}

export async function enrolPasskeyVerify(
  env: MfaEnv,
  input: { mfaToken: string; attestationResponse: RegistrationResponseJSON; name?: string },
  meta: RequestMeta,
) {
  let credentialId = '';
  const answer = await confirmWith(env, input.mfaToken, meta, 'webauthn', async (p) => {
    const added = await factor.webauthnRegisterVerify(
      env,
      p.user,
      input.attestationResponse,
      input.name,
      meta,
      true,
    );
    credentialId = added?.credentialId ?? '';
    return added ?? false;
  });
  return { credentialId, ...answer };
}
