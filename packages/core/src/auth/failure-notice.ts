import type { PosternContext } from '../context.js';
import type { LimiterRecord } from '../ports/limiter-store.js';
import type { User } from '../ports/user-store.js';
import { errorMessage } from '../util/error-message.js';
import { logAuthEvent, type RequestMeta } from './log.js';
import { failedAttemptsMail } from './mails.js';

/** Failed attempts on an account since its last success that make the next success worth a
 *  mail: one or two are typos; three and more are worth the owner's attention. */
export const FAILURES_BEFORE_NOTICE = 3;

/** Failures older than this (from the first one) are forgotten. */
const WINDOW_MS = 24 * 60 * 60 * 1000;

/** The limiter key of an account's failure counter. */
export const failureKey = (userId: string) => `failures:user:${userId}`;

/** Which step succeeded after the failures: the password (a second step still follows), the
 *  second step, or a whole sign-in (no second step). */
export type SucceededStep = 'password' | 'mfa' | 'signin';

/** Counts a failed password or code of a known account (a wrong password at login, re-auth or
 *  a password change, a wrong MFA code). Kept on the limiter port (memory, Postgres), apart from
 *  the throttle buckets, which count per email and address and end with their windows. Never
 *  fails the request: a store error is logged. */
export async function countFailure(ctx: PosternContext, userId: string): Promise<void> {
  await ctx.stores.limiter.consume(failureKey(userId), 1, WINDOW_MS, ctx.clock.now()).catch((e: unknown) => {
    ctx.logger.warn(
      { event: 'limiter_unavailable', reason: 'failure_count', err: errorMessage(e) },
      'failure not counted',
    );
  });
}

/** After a success: clears the account's failures and, when there were at least
 *  `FAILURES_BEFORE_NOTICE`, mails the owner (queued, never awaited) and logs it. */
export async function noticeAfterFailures(
  ctx: PosternContext,
  user: User,
  step: SucceededStep,
  meta?: RequestMeta | null,
): Promise<void> {
  let rec: LimiterRecord | null;
  try {
    // Read and cleared in one store call: a failure counted in between is not lost.
    [rec = null] = await ctx.stores.limiter.settle([], [failureKey(user.id)], ctx.clock.now());
  } catch (e) {
    ctx.logger.warn(
      { event: 'limiter_unavailable', reason: 'failure_count', err: errorMessage(e) },
      'notice skipped',
    );
    return;
  }
  noticeFailures(ctx, user, step, rec, meta);
}

/** The notice part of `noticeAfterFailures` for a caller that has already cleared the
 *  account's failure counter (in the same store call as its throttle buckets): `rec` is what
 *  the counter held. */
export function noticeFailures(
  ctx: PosternContext,
  user: User,
  step: SucceededStep,
  rec: LimiterRecord | null,
  meta?: RequestMeta | null,
): void {
  if (!rec || rec.points < FAILURES_BEFORE_NOTICE) return;
  const mail = failedAttemptsMail(user.email, rec.points, ctx.clock.now(), step);
  ctx.mailer.send(mail).catch((e: unknown) => {
    ctx.logger.warn(
      { event: 'mail_failed', userId: user.id, reason: 'failed_attempts', err: errorMessage(e) },
      'failed-attempts notice not sent',
    );
  });
  logAuthEvent(
    ctx.logger,
    'info',
    {
      event: 'failed_attempts_notice',
      outcome: 'success',
      reason: step,
      userId: user.id,
      failures: rec.points,
    },
    meta,
  );
}
