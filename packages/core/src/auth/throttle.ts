import type { Throttle, ThrottleBucket } from '../context.js';
import { PosternError } from '../errors.js';
import type { Clock } from '../ports/clock.js';
import type { LimiterRecord, LimiterStore } from '../ports/limiter-store.js';
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
  const failed = (bucket: ThrottleBucket | undefined, e: unknown) => {
    opts.logger.error(
      { event: 'limiter_unavailable', bucket, err: errorMessage(e) },
      'limiter store failed; refusing',
    );
    return e;
  };
  /** Adds `points` (a refund when negative) to the bucket's counter of `key`. */
  const windowMs = (bucket: ThrottleBucket) => opts.limits[bucket].durationSeconds * 1000;
  const count = async (bucket: ThrottleBucket, key: string, points: number) => {
    try {
      return await opts.port.consume(counter(bucket, key), points, windowMs(bucket), opts.clock.now());
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
  /** Gives one point back to each of `giveBack`, and clears `clear` and `counters` (other
   *  limiter keys), in one store call, answering what each of `counters` held. A failure is
   *  logged, not thrown (it must not turn a success into an error); the counters then read as
   *  empty. */
  const settle = async (
    giveBack: ReadonlyArray<readonly [ThrottleBucket, string]>,
    clear: ReadonlyArray<readonly [ThrottleBucket, string]>,
    counters: readonly string[] = [],
  ): Promise<Array<LimiterRecord | null>> => {
    if (giveBack.length === 0 && clear.length === 0 && counters.length === 0) return [];
    const held = await opts.port
      .settle(
        giveBack.map(([bucket, key]) => ({ key: counter(bucket, key), points: 1 })),
        [...counters, ...clear.map(([bucket, key]) => counter(bucket, key))],
        opts.clock.now(),
      )
      .catch((e: unknown) => {
        failed((giveBack[0] ?? clear[0])?.[0], e);
        return [];
      });
    return counters.map((_, i) => held[i] ?? null);
  };

  return {
    async take(...entries) {
      // Every bucket is checked in order in one store call: the first one that the attempt
      // would take over its limit refuses and keeps the point (it is over the limit either
      // way); the others are not counted at all, so a flood of refused attempts never holds
      // points in another bucket (the owner's `login:email` while a stranger's guesses are
      // refused by their address's bucket).
      const taken = entries.filter(([, key]) => key !== '');
      const pick = (buckets: readonly ThrottleBucket[]) =>
        taken.filter(([bucket]) => buckets.includes(bucket));
      const answer = {
        release: async (...buckets: ThrottleBucket[]) => {
          await settle(buckets.length === 0 ? taken : pick(buckets), []);
        },
        settle: (giveBack: ThrottleBucket[], clear: ThrottleBucket[], counters: string[] = []) =>
          settle(pick(giveBack), pick(clear), counters),
      };
      if (taken.length === 0) return answer;
      const now = opts.clock.now();
      let records: Array<LimiterRecord | null>;
      try {
        records = await opts.port.consumeMany(
          taken.map(([bucket, key]) => ({
            key: counter(bucket, key),
            points: 1,
            durationMs: windowMs(bucket),
            limit: opts.limits[bucket].points,
          })),
          now,
        );
      } catch (e) {
        throw failed(taken[0]![0], e);
      }
      const over = taken.findIndex(([bucket], i) => (records[i]?.points ?? 0) > opts.limits[bucket].points);
      if (over >= 0) {
        // A store that counted the others anyway (a race on a window's first instant) has
        // them given back.
        const counted = taken.filter((_, i) => i !== over && records[i] !== null);
        if (counted.length > 0) await settle(counted, []);
        // Not logged here: the HTTP layer logs each 429 once, with the bucket (the error's
        // reason) and the request's fields; a library caller gets the error itself.
        throw tooMany(taken[over]![0], records[over]!.resetAt.getTime() - now.getTime());
      }
      return answer;
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
