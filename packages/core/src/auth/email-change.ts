import { PosternError } from '../errors.js';
import type { Principal } from '../http/types.js';
import { me, userOf } from './account.js';
import type { AuthDeps } from './deps.js';
import { ipOf, logAuthEvent, type RequestMeta } from './log.js';
import { confirmBuckets, mailCode, useEmailCode } from './mailed-code.js';
import { emailChangeCodeMail, emailChangedMail } from './mails.js';
import { requireFreshAuth } from './reauth.js';

/** The code is bound to the user and to the new address: it proves that address only. */
const codeOf = (userId: string, newEmail: string) => ({
  userId,
  key: `email-change:${userId}`,
  bind: newEmail,
});

/** Step 1 (Bearer): the password always (the address is how an account is recovered; a wrong
 *  one is a failed login), then a code is mailed to the new address. Every request with the
 *  right password counts as a send (`resend`, `mail:user`), a 409 `email_taken` for an address
 *  another account has included. A new request replaces the last code. */
export async function requestEmailChange(
  d: AuthDeps,
  principal: Principal,
  input: { newEmail: string; password?: string },
  meta: RequestMeta,
): Promise<{ accepted: true }> {
  const { ctx } = d;
  const user = await requireFreshAuth(ctx, principal, input.password, { requirePassword: true, meta });
  if (input.newEmail === user.email)
    throw new PosternError('validation_failed', {
      errors: [{ path: 'newEmail', message: 'This is already your address' }],
    });
  // Counted like a send, taken or not: the 409 would otherwise tell registered addresses apart
  // as fast as a signed-in caller can ask.
  await mailCode(
    d,
    codeOf(user.id, input.newEmail),
    (code, ttl) => emailChangeCodeMail(input.newEmail, code, ttl),
    async () => {
      if (await ctx.stores.users.findByEmail(input.newEmail)) throw new PosternError('email_taken');
    },
  );
  logAuthEvent(
    ctx.logger,
    'info',
    { event: 'email_change_requested', outcome: 'success', userId: user.id },
    meta,
  );
  return { accepted: true };
}

/** Step 2 (Bearer): the code from the new address switches the account to it (proven) and
 *  voids a reset code mailed to the old one, in one transaction with the code's use; the old
 *  address is told. 401 `invalid_code` for a wrong code or another address (counted like
 *  verification codes); 409 `email_taken` when someone registered the address meanwhile (the
 *  code stays usable where the store rolls back). A repeat after the change answers 200. */
export async function confirmEmailChange(
  d: AuthDeps,
  principal: Principal,
  input: { newEmail: string; code: string },
  meta: RequestMeta,
) {
  const { ctx } = d;
  const user = await userOf(d, principal);
  const event = { event: 'email_change', userId: user.id };
  const r = await useEmailCode(ctx, codeOf(user.id, input.newEmail), input.code, {
    count: confirmBuckets(user.id, ipOf(meta)),
    onRight: async (tx) => {
      const outcome = await tx.users.changeEmail(user.id, input.newEmail);
      if (outcome === 'absent') throw new PosternError('invalid_token');
      if (outcome === 'taken') {
        logAuthEvent(ctx.logger, 'info', { ...event, outcome: 'failure', reason: 'email_taken' }, meta);
        throw new PosternError('email_taken');
      }
      await tx.resetCodes.voidForUser(user.id);
    },
    // A parallel copy of the right code switched the address just now.
    done: async () => (await userOf(d, principal)).email === input.newEmail,
  });
  if (r === 'done') return me(d, principal);
  if (r !== 'used') {
    logAuthEvent(ctx.logger, 'info', { ...event, outcome: 'failure', reason: 'invalid_code' }, meta);
    throw new PosternError('invalid_code');
  }
  d.background.run('mail', () => ctx.mailer.send(emailChangedMail(user.email, ctx.clock.now())));
  logAuthEvent(ctx.logger, 'info', { ...event, outcome: 'success' }, meta);
  return me(d, principal);
}
