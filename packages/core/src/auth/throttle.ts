import {
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterStoreAbstract as StoreAbstract,
} from 'rate-limiter-flexible';
import type { Throttle, ThrottleBucket } from '../context.js';
import { PosternError } from '../errors.js';
import type { Clock } from '../ports/clock.js';
import type { LimiterRecord, LimiterStore } from '../ports/limiter-store.js';
import type { Logger } from '../ports/logger.js';
import { limiterAddress } from '../util/client-ip.js';
import { errorMessage } from '../util/error-message.js';
import type { ThrottleLimit } from './options.js';

// The package types RateLimiterStoreAbstract but exports it only by file path; every store-backed
// limiter extends it, so it is taken from one of them (no deep import, same in ESM and CJS).
const RateLimiterStoreAbstract: typeof StoreAbstract = Object.getPrototypeOf(RateLimiterRedis);

/** rate-limiter-flexible on top of the limiter port: the library keeps the limiting logic,
 *  the port keeps the counters (memory now, Postgres later), time comes from the injected clock. */
class PortRateLimiter extends RateLimiterStoreAbstract {
  constructor(
    private readonly port: LimiterStore,
    private readonly clock: Clock,
    opts: { points: number; duration: number; keyPrefix: string },
  ) {
    super({ ...opts, storeClient: port });
  }

  _upsert(rlKey: string, points: number, msDuration: number, forceExpire = false): Promise<LimiterRecord> {
    // block()/set() are not used by Postern and the port has no forced expiry.
    if (forceExpire) return Promise.reject(new Error('forced expiry is not supported'));
    return this.port.consume(rlKey, points, msDuration, this.clock.now());
  }

  _get(rlKey: string): Promise<LimiterRecord | null> {
    return this.port.get(rlKey, this.clock.now());
  }

  _delete(rlKey: string): Promise<boolean> {
    return this.port.delete(rlKey).then(() => true);
  }

  _getRateLimiterRes(_rlKey: string, changedPoints: number, rec: LimiterRecord): RateLimiterRes {
    return new RateLimiterRes(
      Math.max(this.points - rec.points, 0),
      Math.max(rec.resetAt.getTime() - this.clock.now().getTime(), 0),
      rec.points,
      rec.points === changedPoints,
    );
  }
}

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
  const limiters = new Map<ThrottleBucket, PortRateLimiter>();
  for (const [bucket, { points, durationSeconds }] of Object.entries(opts.limits) as Array<
    [ThrottleBucket, ThrottleLimit]
  >) {
    // Counted by the session store inside each rotation, never through the limiter.
    if (bucket === 'refresh:session') continue;
    limiters.set(
      bucket,
      new PortRateLimiter(opts.port, opts.clock, { points, duration: durationSeconds, keyPrefix: bucket }),
    );
  }
  const keyOf = (bucket: ThrottleBucket, key: string) => (bucket.endsWith(':ip') ? limiterAddress(key) : key);
  const failed = (bucket: ThrottleBucket | undefined, e: unknown) => {
    opts.logger.error(
      { event: 'limiter_unavailable', bucket, err: errorMessage(e) },
      'limiter store failed; refusing',
    );
    return e;
  };

  const hit = async (bucket: ThrottleBucket, key: string) => {
    if (key === '') return;
    try {
      await limiters.get(bucket)!.consume(keyOf(bucket, key));
    } catch (e) {
      // Not logged here: the HTTP layer logs each 429 once, with the bucket (the error's
      // reason) and the request's fields; a library caller gets the error itself.
      if (e instanceof RateLimiterRes) throw tooMany(bucket, e.msBeforeNext);
      throw failed(bucket, e);
    }
  };
  /** The port's key of `key` in `bucket` (the limiter's own naming, so `hit` and `reset` meet it). */
  const portKey = (bucket: ThrottleBucket, key: string) => limiters.get(bucket)!.getKey(keyOf(bucket, key));
  /** Settles taken entries, and clears `counters` (other limiter keys), in one store call,
   *  answering what each counter held. A failure is logged, not thrown (it must not turn a
   *  success into an error); the counters then read as empty. */
  const settle = async (
    giveBack: ReadonlyArray<readonly [ThrottleBucket, string]>,
    clear: ReadonlyArray<readonly [ThrottleBucket, string]>,
    counters: readonly string[] = [],
  ): Promise<Array<LimiterRecord | null>> => {
    if (giveBack.length === 0 && clear.length === 0 && counters.length === 0) return [];
    const held = await opts.port
      .settle(
        giveBack.map(([bucket, key]) => ({ key: portKey(bucket, key), points: 1 })),
        [...counters, ...clear.map(([bucket, key]) => portKey(bucket, key))],
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
      // Every bucket is counted in one store call; the first one in order that is over its
      // limit refuses, and the attempt then costs nothing in the others (the refusing bucket
      // keeps its point: it is over the limit either way).
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
      let records: LimiterRecord[];
      try {
        records = await opts.port.consumeMany(
          taken.map(([bucket, key]) => ({
            key: portKey(bucket, key),
            points: 1,
            durationMs: limiters.get(bucket)!.duration * 1000,
          })),
          now,
        );
      } catch (e) {
        throw failed(taken[0]![0], e);
      }
      const over = taken.findIndex(([bucket], i) => records[i]!.points > limiters.get(bucket)!.points);
      if (over >= 0) {
        await settle(
          taken.filter((_, i) => i !== over),
          [],
        );
        // Not logged here: the HTTP layer logs each 429 once, with the bucket (the error's
        // reason) and the request's fields; a library caller gets the error itself.
        throw tooMany(taken[over]![0], records[over]!.resetAt.getTime() - now.getTime());
      }
      return answer;
    },
    hit,
    async reset(bucket, key) {
      if (key === '') return;
      await limiters
        .get(bucket)!
        .delete(keyOf(bucket, key))
        .catch((e: unknown) => {
          throw failed(bucket, e);
        });
    },
  };
}
