import type { MfaMethod } from '../context.js';
import type { User } from '../ports/user-store.js';
import type { MfaEnv } from './env.js';

const ORDER: MfaMethod[] = ['webauthn', 'totp', 'email'];

/** Confirmed methods of the user that the host allows (`mfa.methods`), strongest first.
 *  Empty = MFA is off for this user. */
export async function enabledMethods(env: MfaEnv, userId: string): Promise<MfaMethod[]> {
  const have = new Set(await env.ctx.stores.mfaFactors.listMethods(userId));
  return ORDER.filter((m) => have.has(m) && env.cfg.methods.has(m));
}

/** Methods that may complete a login now. Email is left out for a while after a password
 *  change when the user has another factor: whoever reset the password through the mailbox
 *  must not pass the second step through the same mailbox. */
export function loginMethods(env: MfaEnv, user: User, enabled: MfaMethod[]): MfaMethod[] {
  const lock = env.cfg.emailLockAfterPasswordChangeSeconds * 1000;
  const changed = user.passwordChangedAt.getTime();
  // The password set at signup is not a change.
  const recent = changed > user.createdAt.getTime() && env.ctx.clock.now().getTime() - changed < lock;
  if (enabled.length > 1 && recent) return enabled.filter((m) => m !== 'email');
  return enabled;
}

export async function hasRecoveryCodes(env: MfaEnv, userId: string): Promise<boolean> {
  return (await env.ctx.stores.recoveryCodes.listUnused(userId)).length > 0;
}
