import { randomBytes } from 'node:crypto';
import { ipOf, logAuthEvent, type RequestMeta } from '../auth/log.js';
import type { MfaMethod } from '../context.js';
import { PosternError } from '../errors.js';
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
  opts: { refresh: boolean | 'cookie'; methods: MfaMethod[]; codeSentAtLogin?: boolean },
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
  if (!pending || pending.userId !== claims.sub) throw new PosternError('invalid_token');
  const user = await env.ctx.stores.users.findById(pending.userId);
  if (!user || user.disabled) throw new PosternError('invalid_token');
  return { pending, user };
}

/** What a factor check found:
 *  - `true`: the right code, already used up (an assertion, an enrolment);
 *  - `false`: a wrong code: it counts against the pending login;
 *  - `{ commit }`: the right code, to be used up (a TOTP step, a recovery code, an emailed
 *    code) only once this attempt holds the pending login. A parallel duplicate then loses on
 *    the pending login (401 `invalid_token`, not a wrong try), and a login another factor won
 *    burns nothing. */
export type FactorCheck = boolean | { commit: () => Promise<boolean> };

/** Runs one code check for a pending login. The attempt is counted per user and per address
 *  before any work (429 over the limit, parallel bursts included) and given back on success;
 *  a wrong code also counts against the pending login (it dies at `maxFailures`) and answers
 *  401 `invalid_code`. A right code consumes the pending login atomically: of correct
 *  parallel attempts exactly one gets it, the others 401 `invalid_token`. */
export async function attempt(
  env: MfaEnv,
  token: string,
  meta: RequestMeta,
  method: string,
  check: (p: OpenPending) => Promise<FactorCheck>,
): Promise<OpenPending> {
  const opened = await openPending(env, token);
  const { pending, user } = opened;
  const { logger, clock, stores } = env.ctx;
  const counted = await env.ctx.throttle.take(['code:user', user.id], ['code:ip', ipOf(meta)]);
  const refused = (reason: string) => {
    logAuthEvent(
      logger,
      'info',
      { event: 'mfa_failed', outcome: 'failure', reason, method, userId: user.id },
      meta,
    );
    return new PosternError('invalid_code');
  };
  // Only a wrong code keeps the point: a request refused before any code was checked (a
  // method this login does not offer) and one that lost the login to a parallel attempt give
  // it back. Either way the answer tells nothing about the code.
  const notCounted = async (e: unknown) => {
    await counted.release();
    return e;
  };
  let found: FactorCheck;
  try {
    found = await check(opened);
  } catch (e) {
    throw await notCounted(e);
  }
  if (found === false) {
    const failures = await stores.pendingLogins.recordFailure(pending.jti, env.cfg.maxFailures, clock.now());
    // Ended while this attempt ran (a parallel one won it, e.g. a copy of this very code whose
    // step was taken meanwhile): the answer is that of a used-up token.
    if (failures === null) throw await notCounted(new PosternError('invalid_token'));
    throw refused('wrong_code');
  }
  const won = await stores.pendingLogins.consume(pending.jti, clock.now());
  if (!won) throw await notCounted(new PosternError('invalid_token'));
  // Used up between this attempt's check and now (another login of the same user took the
  // TOTP step or the recovery code): this login is over, the limiter keeps the attempt.
  if (typeof found === 'object' && !(await found.commit())) throw refused('code_used_concurrently');
  // No limiter reset on success, only this attempt given back: whoever holds the password
  // could otherwise wait for the owner's next login and get a fresh budget of guesses.
  await counted.release();
  return { pending: won, user };
}
