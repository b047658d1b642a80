import type { PosternContext } from '../context.js';
import type { LimiterRecord } from '../ports/limiter-store.js';
import { limiterAddress } from '../util/client-ip.js';
import { failureKey } from './failure-notice.js';
import { ipOf, type RequestMeta } from './log.js';

/** The key of the (email, address) bucket. A call without an address (a library call without
 *  `meta.ip`) has a bucket of its own per email: still limited, never sharing an address's. */
const pairKey = (email: string, ip: string) => `${email} ${ip === '' ? '-' : limiterAddress(ip)}`;

/** Counts one password check of an account before it runs (logins, re-authentication, the
 *  current password of a change) in three buckets: per address (`login:ip`), per email and
 *  address (`login:email+ip`, the low one) and per email alone (`login:email`, a high ceiling).
 *  The pair is what a stranger fills: their guesses from one address never refuse the owner
 *  elsewhere, while guesses from many addresses still meet the email's ceiling. Hit in that
 *  order, so a refused guess costs nothing in the email's own bucket. 429 over any of them.
 *  `succeeded()` (the right password) gives this attempt back everywhere and clears the
 *  failures of this email from this address; failures from elsewhere stay counted. */
export async function countPasswordAttempt(ctx: PosternContext, email: string, meta?: RequestMeta | null) {
  const ip = ipOf(meta);
  const pair = pairKey(email, ip);
  const taken = await ctx.throttle.take(['login:ip', ip], ['login:email+ip', pair], ['login:email', email]);
  return {
    /** With `userId` (a login), the account's failure counter is cleared in the same store
     *  call; the answer is what it held, for `noticeFailures`. */
    async succeeded(userId?: string): Promise<LimiterRecord | null> {
      const [failures] = await taken.settle(
        ['login:ip', 'login:email'],
        ['login:email+ip'],
        userId === undefined ? [] : [failureKey(userId)],
      );
      return failures ?? null;
    },
  };
}
