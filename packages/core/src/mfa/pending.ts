import { randomBytes } from 'node:crypto';
import type { MfaMethod } from '../context.js';
import { GatehouseError, isGatehouseError } from '../errors.js';
import type { PendingLogin } from '../ports/pending-login-store.js';
import type { User } from '../ports/user-store.js';
import { addSeconds, type MfaEnv } from './env.js';

/** `typ` of the pending login token: never mistaken for an access token (`at+jwt`) or back. */
export const PENDING_TYP = 'mfa+jwt';

/** Creates the server state and signs the pending token (`typ: mfa+jwt`, audience
 *  `${audience}:mfa`). The login's `refreshToken` wish travels in it (`rt`). */
export async function issuePending(
  env: MfaEnv,
  userId: string,
  opts: { refresh: boolean; methods: MfaMethod[]; codeSentAtLogin?: boolean },
): Promise<{ token: string; pending: PendingLogin }> {
  const now = env.ctx.clock.now();
  const pending: PendingLogin = {
    jti: randomBytes(16).toString('base64url'),
    userId,
    refresh: opts.refresh,
    methods: opts.methods,
    createdAt: now,
    expiresAt: addSeconds(now, env.cfg.pendingTtlSeconds),
    failures: 0,
    // The code mailed at login counts toward the send budget but starts no cooldown:
    // the resend routes are for when that first mail did not arrive.
    sends: opts.codeSentAtLogin ? 1 : 0,
    lastSentAt: null,
  };
  await env.ctx.stores.pendingLogins.create(pending);
  const token = await env.ctx.keyring.sign(
    { sub: userId, jti: pending.jti, aud: env.cfg.pendingAudience, rt: opts.refresh },
    PENDING_TYP,
    env.cfg.pendingTtlSeconds,
  );
  return { token, pending };
}

export interface OpenPending {
  pending: PendingLogin;
  user: User;
}

/** Verifies a pending token and loads its live server state and user; 401 `invalid_token`
 *  for anything else (expired, used, dead, access token, user gone or disabled). */
export async function openPending(env: MfaEnv, token: string): Promise<OpenPending> {
  const claims = await env.ctx.keyring.verify(token, {
    typ: PENDING_TYP,
    audience: env.cfg.pendingAudience,
    requiredClaims: ['sub', 'jti', 'exp', 'iat'],
  });
  const pending = await env.ctx.stores.pendingLogins.get(String(claims.jti), env.ctx.clock.now());
  if (!pending || pending.userId !== claims.sub) throw new GatehouseError('invalid_token');
  const user = await env.ctx.stores.users.findById(pending.userId);
  if (!user || user.disabled) throw new GatehouseError('invalid_token');
  return { pending, user };
}

/** Runs one code check for a pending login. Throttled per user and per address before any
 *  work; a wrong code counts against the pending login (it dies at `maxFailures`) and the
 *  limiter, then answers 401 `invalid_code`. A right code consumes the pending login
 *  atomically: of two correct parallel attempts exactly one gets it. */
export async function attempt(
  env: MfaEnv,
  token: string,
  ip: string,
  method: string,
  check: (p: OpenPending) => Promise<boolean>,
): Promise<OpenPending> {
  const opened = await openPending(env, token);
  const { pending, user } = opened;
  const { throttle, logger } = env.ctx;
  await throttle.check('code:user', user.id);
  await throttle.check('code:ip', ip);
  if (!(await check(opened))) {
    await countFailure(env, pending, ip);
    logger.info(
      { event: 'mfa_failed', outcome: 'failure', reason: 'wrong_code', method, userId: user.id, ip },
      'mfa code rejected',
    );
    throw new GatehouseError('invalid_code');
  }
  const won = await env.ctx.stores.pendingLogins.consume(pending.jti, env.ctx.clock.now());
  if (!won) throw new GatehouseError('invalid_token');
  // No limiter reset on success: whoever holds the password could otherwise wait for the
  // owner's next login and get a fresh budget of guesses against a six-digit code.
  return { pending: won, user };
}

/** Counts one wrong code on the pending login (it dies at `maxFailures`) and on the limiter. */
export async function countFailure(env: MfaEnv, pending: PendingLogin, ip: string): Promise<void> {
  await env.ctx.stores.pendingLogins.recordFailure(pending.jti, env.cfg.maxFailures, env.ctx.clock.now());
  await hitCodeLimits(env, pending.userId, ip);
}

/** Counts one wrong code per user and per address. The limiter's own 429 for this very
 *  attempt is not surfaced: the answer stays `invalid_code`, the next check answers 429. */
export async function hitCodeLimits(env: MfaEnv, userId: string, ip: string): Promise<void> {
  for (const [bucket, key] of [
    ['code:user', userId],
    ['code:ip', ip],
  ] as const) {
    try {
      await env.ctx.throttle.hit(bucket, key);
    } catch (e) {
      if (!isGatehouseError(e) || e.code !== 'rate_limited') throw e;
    }
  }
}
