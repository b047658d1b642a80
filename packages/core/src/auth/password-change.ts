import { PosternError } from '../errors.js';
import type { Principal } from '../http/types.js';
import { userOf } from './account.js';
import type { AuthDeps } from './deps.js';
import { countFailure } from './failure-notice.js';
import { logAuthEvent, type RequestMeta } from './log.js';
import { passwordChangedMail } from './mails.js';
import { countPasswordAttempt } from './password-attempt.js';
import { passwordContext } from './signup.js';

export interface ChangePasswordInput {
  currentPassword: string;
  newPassword: string;
  keepOtherSessions?: boolean;
}

/** `POST /auth/password`: a wrong current password is a failed login (same limits, same
 *  answer); other sessions end unless the caller opts out; pending MFA logins die; the owner
 *  is mailed. */
export async function changePassword(
  d: AuthDeps,
  principal: Principal,
  input: ChangePasswordInput,
  meta: RequestMeta,
): Promise<void> {
  const { ctx, passwords } = d;
  const user = await userOf(d, principal);
  const attempt = await countPasswordAttempt(ctx, user.email, meta);
  if (!(await passwords.verify(user, input.currentPassword))) {
    await countFailure(ctx, user.id);
    logAuthEvent(
      ctx.logger,
      'info',
      {
        event: 'password_change',
        outcome: 'failure',
        reason: 'wrong_password',
        userId: user.id,
        sid: principal.sid,
      },
      meta,
    );
    throw new PosternError('invalid_credentials');
  }
  await attempt.succeeded();
  passwords.assertStrong(input.newPassword, passwordContext(d, user), 'newPassword');
  await passwords.assertNotBreached(input.newPassword, 'newPassword');
  const passwordHash = await passwords.hash(input.newPassword);

  const at = ctx.clock.now();
  const endOthers = input.keepOtherSessions !== true;
  const sids = await ctx.stores.transaction(async (tx) => {
    // Compare-and-set: a concurrent change with the same old password cannot both win.
    const changed = await tx.users.setPassword(user.id, {
      passwordHash,
      changedAt: at,
      ifHash: user.passwordHash,
    });
    if (!changed) throw new PosternError('invalid_credentials');
    const ended = endOthers
      ? await tx.sessions.revokeAllForUser(user.id, at, {
          reason: 'password_change',
          exceptSid: principal.sid,
        })
      : [];
    await d.mfa.voidPending(user.id, tx);
    return ended;
  });
  d.ended.add(sids);
  d.background.run('mail', () => ctx.mailer.send(passwordChangedMail(user.email, at, 'change', endOthers)));
  logAuthEvent(
    ctx.logger,
    'info',
    {
      event: 'password_change',
      outcome: 'success',
      userId: user.id,
      sid: principal.sid,
      sessionsEnded: sids.length,
    },
    meta,
  );
}
