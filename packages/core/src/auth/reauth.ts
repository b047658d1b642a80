import type { PosternContext } from '../context.js';
import { PosternError } from '../errors.js';
import type { Principal } from '../http/types.js';
import type { User } from '../ports/user-store.js';
import { userOf } from './account.js';
import { countFailure } from './failure-notice.js';
import { logAuthEvent, type RequestMeta } from './log.js';
import { countPasswordAttempt } from './password-attempt.js';

/** A login at most this old counts as fresh authentication (10 minutes). */
export const REAUTH_WINDOW_SECONDS = 600;

/** Guards a sensitive change (MFA factors, sessions): passes when the session's login
 *  (`auth_time`) is at most 10 minutes old, or when `password` is the user's password;
 *  otherwise 403 `reauth_required`. A given password is always checked, fresh or not.
 *  `requirePassword` (removing a factor, new recovery codes) ignores `auth_time`.
 *  Returns the live user (401 `invalid_token` when gone or disabled). Wrong passwords count
 *  as failed logins of the account and the address (throttled, 429 when over). */
export async function requireFreshAuth(
  ctx: PosternContext,
  principal: Principal,
  password?: string,
  opts: { requirePassword?: boolean; meta?: RequestMeta } = {},
): Promise<User> {
  if (password === undefined) {
    const age = Math.floor(ctx.clock.now().getTime() / 1000) - principal.authTime;
    if (opts.requirePassword || age > REAUTH_WINDOW_SECONDS)
      throw denied(ctx, principal, opts.requirePassword ? 'password_required' : 'stale_auth', opts.meta);
    return userOf({ ctx }, principal);
  }
  const user = await ctx.stores.users.findById(principal.userId);
  if (!user) throw new PosternError('invalid_token');
  const attempt = await countPasswordAttempt(ctx, user.email, opts.meta);
  if (user.disabled || !(await ctx.passwords.verify(user, password))) {
    if (!user.disabled) await countFailure(ctx, user.id);
    throw denied(ctx, principal, 'wrong_password', opts.meta);
  }
  await attempt.succeeded();
  return user;
}

function denied(ctx: PosternContext, principal: Principal, reason: string, meta?: RequestMeta): PosternError {
  logAuthEvent(
    ctx.logger,
    'info',
    {
      event: 'authorization_denied',
      outcome: 'failure',
      reason,
      userId: principal.userId,
      sid: principal.sid,
    },
    meta,
  );
  return new PosternError('reauth_required');
}
