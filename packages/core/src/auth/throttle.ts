import type { Throttle, ThrottleBucket } from '../context.js';
import { PosternError } from '../errors.js';
import type { Clock } from '../ports/clock.js';
import type { LimiterStore } from '../ports/limiter-store.js';
import type { Logger } from '../ports/logger.js';
import { limiterAddress } from '../util/client-ip.js';
import { errorMessage } from '../util/error-message.js';
import type { ThrottleLimit } from './options.js';

/** The 429 of a bucket over its limit. */
export const tooMany = (bucket: ThrottleBucket, msBeforeNext: number) =>
  new PosternError('rate_limited', {
    retryAfter: Math.max(1, Math.ceil(msBeforeNext / 1000)),
    reason: bucket,
  });

/** The Throttle of the context: named buckets with configured limits. Keys of `:ip` buckets
 *  are cut to the limiter address (IPv6 /64). An empty key (no client address known, e.g. a
 *  library call without `ip`) is not limited. A limiter store failure propagates (503): the
 *  throttle fails closed. */
export function createThrottle(opts: {
  port: LimiterStore;
  clock: Clock;
  logger: Logger;
  limits: Record<ThrottleBucket, ThrottleLimit>;
}): Throttle {
  // The port counts fixed windows; the throttle only names the counter and compares it with the
  // bucket's limit. `refresh:session` is counted by the session store inside each rotation.
  const counter = (bucket: ThrottleBucket, key: string) =>
    `${bucket}:${bucket.endsWith(':ip') ? limiterAddress(key) : key}`;
  const failed = (bucket: ThrottleBucket, e: unknown) => {
    opts.logger.error(
      { event: 'limiter_unavailable', bucket, err: errorMessage(e) },
      'limiter store failed; refusing',
    );
    return e;
  };
  /** Adds `points` (a refund when negative) to the bucket's counter of `key`. */
  const count = async (bucket: ThrottleBucket, key: string, points: number) => {
    try {
      const windowMs = opts.limits[bucket].durationSeconds * 1000;
      return await opts.port.consume(counter(bucket, key), points, windowMs, opts.clock.now());
    } catch (e) {
      throw failed(bucket, e);
    }
  };

  const hit = async (bucket: ThrottleBucket, key: string) => {
    if (key === '') return;
    const rec = await count(bucket, key, 1);
    // Not logged here: the HTTP layer logs each 429 once, with the bucket (the error's reason)
    // and the request's fields; a library caller gets the error itself.
    if (rec.points > opts.limits[bucket].points)
      throw tooMany(bucket, rec.resetAt.getTime() - opts.clock.now().getTime());
  };
  /** A refund that fails is logged (by `count`), not thrown: it must not turn a success into an
   *  error. */
  const refund = async (bucket: ThrottleBucket, key: string) => {
    if (key === '') return;
    await count(bucket, key, -1).catch(() => {});
  };

  return {
    async take(...entries) {
      const taken: Array<readonly [ThrottleBucket, string]> = [];
      const giveBack = (...buckets: ThrottleBucket[]) =>
        Promise.all(
          taken
            .filter(([bucket]) => buckets.length === 0 || buckets.includes(bucket))
            .map(([bucket, key]) => refund(bucket, key)),
        ).then(() => {});
      for (const entry of entries) {
        try {
          await hit(entry[0], entry[1]);
        } catch (e) {
          // A refused attempt costs nothing in the buckets that let it through; the refusing
          // bucket keeps its point (it is over the limit either way).
          await giveBack();
          throw e;
        }
        taken.push(entry);
      }
      return { release: giveBack };
    },
    hit,
    async reset(bucket, key) {
      if (key === '') return;
      try {
        await opts.port.delete(counter(bucket, key));
      } catch (e) {
        throw failed(bucket, e);
      }
    },
  };
}
