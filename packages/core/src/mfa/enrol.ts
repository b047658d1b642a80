import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import { requireFreshAuth } from '../auth/reauth.js';
import type { MfaMethod } from '../context.js';
import { PosternError } from '../errors.js';
import type { Principal } from '../http/types.js';
import type { User } from '../ports/user-store.js';
import { ipOf, type RequestMeta } from '../util/security-log.js';
import type { MfaEnv } from './env.js';
import * as factor from './factor-setup.js';
import { enabledMethods } from './factors.js';
import { replaceRecoveryCodes } from './recovery.js';

// Enrolment and housekeeping for a signed-in user (Bearer routes).

/** Fresh authentication for adding a factor: a recent login or the password. */
const fresh = (env: MfaEnv, principal: Principal, password: string | undefined, meta: RequestMeta) =>
  requireFreshAuth(env.ctx, principal, password, { meta });

/** Removal and recovery regeneration always need the password, whatever
 *  the login's age. A missing one answers 403 `reauth_required`, not a field
 *  error; a wrong one too, and counts as a failed login. */
const withPassword = (env: MfaEnv, principal: Principal, password: string | undefined, meta: RequestMeta) =>
  requireFreshAuth(env.ctx, principal, password, { requirePassword: true, meta });

/** Code attempts during enrolment are throttled per user and address like login codes:
 *  counted before the check, given back when the code is right. */
async function checkCode(
  env: MfaEnv,
  user: User,
  meta: RequestMeta,
  confirm: () => Promise<factor.Confirmed>,
): Promise<string[] | null> {
  const counted = await env.ctx.throttle.take(['code:user', user.id], ['code:ip', ipOf(meta)]);
  let confirmed: factor.Confirmed;
  try {
    confirmed = await confirm();
  } catch (e) {
    // Refused before a code was judged (e.g. no setup to confirm): not a wrong code.
    await counted.release();
    throw e;
  }
  if (confirmed === false) throw new PosternError('invalid_code');
  await counted.release();
  return confirmed.recoveryCodes;
}

const hasMfa = async (env: MfaEnv, user: User) => (await enabledMethods(env, user.id)).length > 0;

export async function totpSetup(
  env: MfaEnv,
  principal: Principal,
  password: string | undefined,
  meta: RequestMeta,
) {
  factor.assertAllowed(env, 'totp');
  return factor.totpSetup(env, await fresh(env, principal, password, meta));
}

export async function totpConfirm(
  env: MfaEnv,
  principal: Principal,
  input: { code: string; password?: string },
  meta: RequestMeta,
) {
  factor.assertAllowed(env, 'totp');
  const user = await fresh(env, principal, input.password, meta);
  const first = !(await hasMfa(env, user));
  const recoveryCodes = await checkCode(env, user, meta, () =>
    factor.totpConfirm(env, user, input.code, first),
  );
  return factor.factorAdded(env, user, 'totp', recoveryCodes, principal.sid, meta);
}

export async function emailSetup(
  env: MfaEnv,
  principal: Principal,
  password: string | undefined,
  meta: RequestMeta,
): Promise<void> {
  factor.assertAllowed(env, 'email');
  await factor.emailSetup(env, await fresh(env, principal, password, meta));
}

export async function emailConfirm(
  env: MfaEnv,
  principal: Principal,
  input: { code: string; password?: string },
  meta: RequestMeta,
) {
  factor.assertAllowed(env, 'email');
  const user = await fresh(env, principal, input.password, meta);
  const first = !(await hasMfa(env, user));
  const recoveryCodes = await checkCode(env, user, meta, () =>
    factor.emailConfirm(env, user, input.code, first),
  );
  return factor.factorAdded(env, user, 'email', recoveryCodes, principal.sid, meta);
}

export async function webauthnRegisterOptions(
  env: MfaEnv,
  principal: Principal,
  input: { password?: string },
  meta: RequestMeta,
) {
  await env.ctx.throttle.hit('webauthn:ip', ipOf(meta));
  factor.assertAllowed(env, 'webauthn');
  return factor.webauthnRegisterOptions(env, await fresh(env, principal, input.password, meta));
}

export async function webauthnRegisterVerify(
  env: MfaEnv,
  principal: Principal,
  input: { attestationResponse: RegistrationResponseJSON; name?: string; password?: string },
  meta: RequestMeta,
) {
  factor.assertAllowed(env, 'webauthn');
  const user = await fresh(env, principal, input.password, meta);
  const first = !(await hasMfa(env, user));
  const added = await factor.webauthnRegisterVerify(
    env,
    user,
    input.attestationResponse,
    input.name,
    meta,
    first,
  );
  if (!added) throw new PosternError('invalid_code');
  return {
    credentialId: added.credentialId,
    ...(await factor.factorAdded(env, user, 'webauthn', added.recoveryCodes, principal.sid, meta)),
  };
}

export async function listPasskeys(env: MfaEnv, principal: Principal) {
  const creds = await env.ctx.stores.webauthnCredentials.listCredentials(principal.userId);
  return creds.map((c) => ({
    id: c.id,
    name: c.name,
    createdAt: c.createdAt.toISOString(),
    lastUsedAt: c.lastUsedAt?.toISOString() ?? null,
    deviceType: c.deviceType,
    backedUp: c.backedUp,
  }));
}

/** After a removal: with no method left MFA is off and the recovery codes go too. */
async function afterRemoval(
  env: MfaEnv,
  user: User,
  principal: Principal,
  method: MfaMethod,
  meta: RequestMeta,
) {
  if (!(await hasMfa(env, user))) await env.ctx.stores.recoveryCodes.deleteAll(user.id);
  await factor.afterFactorChange(env, user, principal.sid, { kind: 'removed', method }, meta);
}

export async function disableMfaMethod(
  env: MfaEnv,
  principal: Principal,
  method: MfaMethod,
  password: string | undefined,
  meta: RequestMeta,
): Promise<void> {
  const user = await withPassword(env, principal, password, meta);
  const { mfaFactors, webauthnCredentials } = env.ctx.stores;
  const removed =
    method === 'webauthn'
      ? (await webauthnCredentials.removeAllCredentials(user.id)) > 0
      : await mfaFactors.removeFactor(user.id, method);
  if (!removed) throw new PosternError('not_found');
  await afterRemoval(env, user, principal, method, meta);
}

export async function removePasskey(
  env: MfaEnv,
  principal: Principal,
  id: string,
  password: string | undefined,
  meta: RequestMeta,
) {
  const user = await withPassword(env, principal, password, meta);
  if (!(await env.ctx.stores.webauthnCredentials.removeCredential(user.id, id)))
    throw new PosternError('not_found');
  await afterRemoval(env, user, principal, 'webauthn', meta);
}

export async function regenerateRecoveryCodes(
  env: MfaEnv,
  principal: Principal,
  password: string | undefined,
  meta: RequestMeta,
) {
  const user = await withPassword(env, principal, password, meta);
  if (!(await hasMfa(env, user)))
    throw new PosternError('validation_failed', { detail: 'MFA is not enabled' });
  const recoveryCodes = await replaceRecoveryCodes(env, user.id);
  await factor.afterFactorChange(env, user, principal.sid, { kind: 'recovery_regenerated' }, meta);
  return { recoveryCodes };
}
