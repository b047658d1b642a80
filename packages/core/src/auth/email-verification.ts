import { GatehouseError } from '../errors.js';
import type { Principal } from '../http/types.js';
import { hashEmailCode, isEmailCode, newEmailCode } from '../tokens/email-code.js';
import { me, userOf } from './account.js';
import type { AuthDeps } from './deps.js';
import { logAuthEvent, type RequestMeta } from './log.js';
import { verificationCodeMail } from './mails.js';

/** Same lifetime as every mailed six-digit code: with `code:user` at 10 failures per 15 min,
 *  a guess stays near one in 100,000 per code. */
export const VERIFICATION_CODE_TTL_SECONDS = 10 * 60;

const verifyCodeKey = (userId: string) => `verify:${userId}`;

/** Mails a code that proves the address (Bearer). 409 `nothing_to_resend` once it is proven.
 *  One send per 30 s (`resend`) and a few per hour (`mail:user`): signup takes any address,
 *  so this must not let anyone flood someone else's mailbox. A new code replaces the last. */
export async function sendVerificationEmail(
  d: AuthDeps,
  principal: Principal,
  meta: RequestMeta,
): Promise<{ accepted: true }> {
  const { ctx } = d;
  const user = await userOf(d, principal);
  if (user.emailVerified) throw new GatehouseError('nothing_to_resend');
  await ctx.throttle.hit('resend', verifyCodeKey(user.id));
  await ctx.throttle.hit('mail:user', user.id);
  const key = verifyCodeKey(user.id);
  const code = newEmailCode();
  const now = ctx.clock.now();
  await ctx.stores.emailCodes.put({
    key,
    userId: user.id,
    codeHash: hashEmailCode(key, code),
    createdAt: now,
    expiresAt: new Date(now.getTime() + VERIFICATION_CODE_TTL_SECONDS * 1000),
  });
  d.background.run('mail', () =>
    ctx.mailer.send(verificationCodeMail(user.email, code, VERIFICATION_CODE_TTL_SECONDS / 60)),
  );
  logAuthEvent(
    ctx.logger,
    'info',
    { event: 'email_verification_sent', outcome: 'success', userId: user.id },
    meta,
  );
  return { accepted: true };
}

/** Marks the address proven when `code` is the mailed one (single use, atomic) and answers
 *  like `/me`. A wrong code is 401 `invalid_code` and counts with the MFA codes (`code:user`,
 *  `code:ip`); an address already proven answers at once (a repeated submit is not an error). */
export async function verifyEmail(
  d: AuthDeps,
  principal: Principal,
  input: { code: string },
  meta: RequestMeta,
) {
  const { ctx } = d;
  const user = await userOf(d, principal);
  if (user.emailVerified) return me(d, principal);
  const counted = await ctx.throttle.take(['code:user', user.id], ['code:ip', meta.ip ?? '']);
  const key = verifyCodeKey(user.id);
  const code = input.code.trim();
  if (
    !isEmailCode(code) ||
    !(await ctx.stores.emailCodes.consume(key, hashEmailCode(key, code), ctx.clock.now()))
  ) {
    logAuthEvent(
      ctx.logger,
      'info',
      { event: 'email_verified', outcome: 'failure', reason: 'invalid_code', userId: user.id },
      meta,
    );
    throw new GatehouseError('invalid_code');
  }
  await counted.release();
  await ctx.stores.users.markEmailVerified(user.id);
  logAuthEvent(ctx.logger, 'info', { event: 'email_verified', outcome: 'success', userId: user.id }, meta);
  return me(d, principal);
}
