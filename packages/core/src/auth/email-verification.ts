import { PosternError } from '../errors.js';
import type { Principal } from '../http/types.js';
import { me, userOf } from './account.js';
import type { AuthDeps } from './deps.js';
import { ipOf, logAuthEvent, type RequestMeta } from './log.js';
import { confirmBuckets, mailCode, useEmailCode } from './mailed-code.js';
import { verificationCodeMail } from './mails.js';

const codeOf = (userId: string) => ({ userId, key: `verify:${userId}` });

/** Mails a code that proves the address (Bearer). 409 `nothing_to_resend` once it is proven. */
export async function sendVerificationEmail(
  d: AuthDeps,
  principal: Principal,
  meta: RequestMeta,
): Promise<{ accepted: true }> {
  const user = await userOf(d, principal);
  if (user.emailVerified) throw new PosternError('nothing_to_resend');
  await mailCode(d, codeOf(user.id), (code, ttl) => verificationCodeMail(user.email, code, ttl));
  logAuthEvent(
    d.ctx.logger,
    'info',
    { event: 'email_verification_sent', outcome: 'success', userId: user.id },
    meta,
  );
  return { accepted: true };
}

/** Marks the address proven when `code` is the mailed one and answers like `/me`; 401
 *  `invalid_code` otherwise. Wrong codes count in `confirm:user` (per day: a stranger's account
 *  can ask for codes all day) and `code:ip`. An address already proven answers at once (a
 *  repeated or parallel submit is not an error). */
export async function verifyEmail(
  d: AuthDeps,
  principal: Principal,
  input: { code: string },
  meta: RequestMeta,
) {
  const user = await userOf(d, principal);
  if (user.emailVerified) return me(d, principal);
  const r = await useEmailCode(d.ctx, codeOf(user.id), input.code, {
    count: confirmBuckets(user.id, ipOf(meta)),
    onRight: (tx) => tx.users.markEmailVerified(user.id),
    // A parallel copy of the right code used it just now: that is a success too.
    done: async () => (await userOf(d, principal)).emailVerified,
  });
  const event = { event: 'email_verified', userId: user.id };
  if (r === 'done') return me(d, principal);
  if (r !== 'used') {
    logAuthEvent(d.ctx.logger, 'info', { ...event, outcome: 'failure', reason: 'invalid_code' }, meta);
    throw new PosternError('invalid_code');
  }
  logAuthEvent(d.ctx.logger, 'info', { ...event, outcome: 'success' }, meta);
  return me(d, principal);
}
