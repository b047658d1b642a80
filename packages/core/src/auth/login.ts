import type { MfaRequiredAnswer, SessionAnswer } from '../context.js';
import { PosternError } from '../errors.js';
import type { AuthDeps } from './deps.js';
import { countFailure, noticeFailures } from './failure-notice.js';
import { ipOf, logAuthEvent, type RequestMeta } from './log.js';
import { countPasswordAttempt } from './password-attempt.js';
import type { SessionService } from './sessions.js';

export interface LoginInput {
  /** Canonical email. */
  email: string;
  password: string;
  /** `'cookie'`: a browser session (its refresh token in the cookie; cookie sessions on). */
  refreshToken?: boolean | 'cookie';
}

/** Email + password. Throttled before any Argon2 work (the attempt is counted first, so a
 *  parallel burst cannot pass the limit); unknown emails cost one dummy-hash verify and count
 *  against the limits like known ones; one answer for every failure. */
export async function login(
  d: AuthDeps,
  sessions: SessionService,
  input: LoginInput,
  meta: RequestMeta,
): Promise<SessionAnswer | MfaRequiredAnswer> {
  const { ctx, passwords } = d;
  const ip = ipOf(meta);
  // Before any work: a wish this instance cannot grant is the caller's mistake, not a login.
  if (input.refreshToken === 'cookie' && !d.config.cookieSessions)
    throw new PosternError('validation_failed', {
      errors: [{ path: 'refreshToken', message: 'Cookie sessions are not enabled on this server' }],
    });
  const attempt = await countPasswordAttempt(ctx, input.email, meta);

  const user = await ctx.stores.users.findByEmail(input.email);
  const ok = await passwords.verify(user, input.password);
  if (!user || !ok || user.disabled) {
    // After the answer: a store write only known emails make must not show in the timing.
    if (user && !ok) d.background.run('failure_count', () => countFailure(ctx, user.id));
    logAuthEvent(
      ctx.logger,
      'info',
      {
        event: 'login',
        outcome: 'failure',
        reason: !user ? 'unknown_email' : !ok ? 'wrong_password' : 'disabled',
        userId: user?.id,
        factor: 'password',
      },
      meta,
    );
    throw new PosternError('invalid_credentials');
  }
  // The account's failures since its last success are read and cleared with the buckets.
  const failures = await attempt.succeeded(user.id);

  if (passwords.needsRehash(user.passwordHash)) {
    d.background.run('rehash', async () => {
      const passwordHash = await passwords.hash(input.password);
      await ctx.stores.users.setPassword(user.id, {
        passwordHash,
        changedAt: user.passwordChangedAt,
        ifHash: user.passwordHash,
      });
    });
  }

  const refresh = input.refreshToken === 'cookie' ? 'cookie' : input.refreshToken === true;
  const methods = await d.mfa.methods(user.id);
  const mfa = methods.length > 0 || d.mfa.required;
  const started = mfa
    ? await d.mfa.begin(user, { refresh, methods, meta })
    : await sessions.issuer.issue(user, { refresh, amr: ['pwd'], ip, userAgent: meta.userAgent });
  if (!started) {
    // The password was reset or changed (or the user disabled) while it was being checked.
    logAuthEvent(
      ctx.logger,
      'info',
      {
        event: 'login',
        outcome: 'failure',
        reason: 'credentials_changed',
        userId: user.id,
        factor: 'password',
      },
      meta,
    );
    throw new PosternError('invalid_credentials');
  }
  noticeFailures(ctx, user, mfa ? 'password' : 'signin', failures, meta);
  if ('mfaRequired' in started) {
    logAuthEvent(
      ctx.logger,
      'info',
      { event: 'login', outcome: 'success', reason: 'mfa_required', userId: user.id, factor: 'password' },
      meta,
    );
    return started;
  }
  const { sid, answer } = started;
  logAuthEvent(
    ctx.logger,
    'info',
    { event: 'login', outcome: 'success', userId: user.id, sid, factor: 'password' },
    meta,
  );
  return answer;
}
