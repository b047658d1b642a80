import type { LimiterRecord, LimiterStore } from '../ports/limiter-store.js';
import type { Logger } from '../ports/logger.js';
import { capWarning } from './cap-warning.js';
import { hasEnded } from './expiry.js';

/** Counters kept at most (about 300 bytes each): a flood of distinct keys (a `forgot` per
 *  invented address, from many client addresses) cannot grow the process without bound. */
export const DEFAULT_LIMITER_MAX_KEYS = 200_000;

/** Tiers by points: 1, 2-3, 4-7, 8 and more. A full store drops counters of a lower tier
 *  first, so a flood of fresh keys (1 point each) only pushes out other fresh keys, and a
 *  counter near its limit (a guessed password's `login:email` at 8+) outlives any flood that
 *  does not spend 8 requests on each of its keys. */
const tierOf = (points: number) => (points <= 1 ? 0 : points < 4 ? 1 : points < 8 ? 2 : 3);

interface Counter {
  points: number;
  /** End of the window, ms. */
  resetAt: number;
}

/** Fixed-window counters in one Map, kept in the order their windows started (a new window
 *  re-inserts its key at the end).
 *
 *  Memory stays bounded under a flood: at most `maxKeys` counters. A new key that finds the
 *  store full makes room for an eighth of the cap at once, by scans of the Map: ended windows
 *  first, then the lowest tier, oldest window first. The scans then run once per `maxKeys / 8`
 *  new keys, not on every one. A dropped counter restarts, which weakens that limit for a
 *  moment; running out of memory would take every limit down with the process. Below the cap
 *  an ended counter is left until its key comes back or room is needed.
 *
 *  A real store does better: counters shared by every process (one upsert per attempt that
 *  restarts an ended window, as the Postgres store does), and ended rows deleted in the
 *  background rather than on a full store. */
export function memoryLimiterStore(maxKeys = DEFAULT_LIMITER_MAX_KEYS, logger?: Logger): LimiterStore {
  const counters = new Map<string, Counter>();
  const keep = maxKeys - Math.ceil(maxKeys / 8);
  // Dropping live counters weakens their limits: the host should know (a larger cap or a
  // shared store). Ended counters going is no loss and no warning.
  const full = capWarning(
    logger,
    'limiter',
    maxKeys,
    'in-memory limiter full: dropping live counters, fewest points first',
  );

  const out = (c: Counter): LimiterRecord => ({ points: c.points, resetAt: new Date(c.resetAt) });
  const makeRoom = (now: Date) => {
    for (const [k, c] of counters) if (hasEnded(c.resetAt, now)) counters.delete(k);
    if (counters.size <= keep) full.room();
    else full.dropping();
    for (let tier = 0; tier <= 3 && counters.size > keep; tier++) {
      for (const [k, c] of counters) {
        if (counters.size <= keep) break;
        if (tierOf(c.points) === tier) counters.delete(k);
      }
    }
  };

  /** The counter of `key` while its window lasts; an ended one counts as none. */
  const live = (key: string, now: Date) => {
    const c = counters.get(key);
    return c && !hasEnded(c.resetAt, now) ? c : undefined;
  };

  /** One counter's add, without an `await`: `consumeMany` and `settle` stay atomic. */
  const add = (key: string, points: number, durationMs: number, now: Date): LimiterRecord => {
    const c = live(key, now);
    if (c) {
      c.points = Math.max(0, c.points + points);
      return out(c);
    }
    // A refund never starts a window.
    if (points < 0) return { points: 0, resetAt: new Date(now) };
    counters.delete(key);
    if (counters.size >= maxKeys) makeRoom(now);
    const fresh = { points, resetAt: now.getTime() + durationMs };
    counters.set(key, fresh);
    return out(fresh);
  };

  const store: LimiterStore = {
    async consume(key, points, durationMs, now) {
      return add(key, points, durationMs, now);
    },
    async consumeMany(entries, now) {
      const after = (e: (typeof entries)[number]) => (live(e.key, now)?.points ?? 0) + e.points;
      const over = entries.findIndex((e) => after(e) > e.limit);
      return entries.map((e, i) => (over < 0 || i === over ? add(e.key, e.points, e.durationMs, now) : null));
    },
    async settle(refund, clear, now) {
      for (const r of refund) add(r.key, -r.points, 0, now);
      return clear.map((key) => {
        const c = live(key, now);
        counters.delete(key);
        return c ? out(c) : null;
      });
    },
    async get(key, now) {
      const c = live(key, now);
      return c ? out(c) : null;
    },
    async delete(key) {
      counters.delete(key);
    },
  };
  return store;
}
