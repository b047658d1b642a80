import { PosternError } from '../errors.js';
import type { PendingLogin } from '../ports/pending-login-store.js';
import type { User } from '../ports/user-store.js';
import { hashEmailCode, isEmailCode, storeEmailCode } from '../tokens/email-code.js';
import type { MfaEnv } from './env.js';
import { type FactorCheck, WRONG_CODE } from './pending.js';

export const loginCodeKey = (jti: string) => `login:${jti}`;
export const enrolCodeKey = (userId: string) => `enrol:${userId}`;

/** Why the code is mailed: the same subject either way (clients look for it), a line that
 *  says what entering it does. */
const purposeLine = {
  login: 'If you did not try to sign in, change your password.',
  enrol:
    'Entering it turns on sign-in codes by email for your account. If you did not ask for this, change your password.',
};

/** Stores a fresh code under `key` (the previous one dies) and mails it. The mail holds only
 *  the code. The send is queued, never awaited. */
export async function sendEmailCode(
  env: MfaEnv,
  user: User,
  key: string,
  purpose: keyof typeof purposeLine = 'login',
): Promise<void> {
  const code = await storeEmailCode(env.ctx.stores.emailCodes, {
    key,
    userId: user.id,
    now: env.ctx.clock.now(),
    ttlSeconds: env.cfg.emailCodeTtlSeconds,
  });
  const minutes = Math.round(env.cfg.emailCodeTtlSeconds / 60);
  env.ctx.mailer
    .send({
      to: user.email,
      subject: 'Your sign-in code',
      text: `Your sign-in code is ${code}\n\nIt expires in ${minutes} minutes and works once. ${purposeLine[purpose]}`,
    })
    .catch((e: unknown) => {
      env.ctx.logger.warn(
        {
          event: 'mail_failed',
          userId: user.id,
          reason: 'email_code',
          err: e instanceof Error ? e.message : 'error',
        },
        'email code not sent',
      );
    });
}

/** Sends a login code for a pending login, within its send budget (cooldown and maximum,
 *  counted atomically in the store) and the user's code mails (`mail:user`, shared by every
 *  pending login of the user); 429 with `Retry-After` over either. */
export async function sendLoginCode(env: MfaEnv, pending: PendingLogin, user: User): Promise<void> {
  const r = await env.ctx.stores.pendingLogins.claimSend(pending.jti, env.ctx.clock.now(), {
    cooldownSeconds: env.cfg.resendCooldownSeconds,
    maxSends: env.cfg.maxSends,
  });
  if (!r) throw new PosternError('invalid_token');
  if (!r.ok)
    throw new PosternError('rate_limited', { retryAfter: r.retryAfterSeconds, reason: 'send_budget' });
  await env.ctx.throttle.hit('mail:user', user.id);
  await sendEmailCode(env, user, loginCodeKey(pending.jti));
}

/** Checks the code of a pending login without using it: the pending login is what is single
 *  use (consumed atomically by the attempt), and the code dies with it. So parallel copies of
 *  the right code race on the pending login (one session, the others `invalid_token`) instead
 *  of counting as wrong tries that could kill it first. */
export async function checkLoginCode(env: MfaEnv, jti: string, code: string): Promise<FactorCheck> {
  if (!isEmailCode(code)) return WRONG_CODE;
  const key = loginCodeKey(jti);
  const codes = env.ctx.stores.emailCodes;
  if (!(await codes.matches(key, hashEmailCode(key, code), env.ctx.clock.now()))) return WRONG_CODE;
  return {
    kind: 'right',
    commit: async () => {
      await codes.delete(key);
      return true;
    },
  };
}
