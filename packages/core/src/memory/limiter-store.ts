import type { LimiterRecord, LimiterStore } from '../ports/limiter-store.js';

/** Counters kept at most (about 250 bytes each): a flood of distinct keys (a `forgot` per
 *  invented address, from many client addresses) cannot grow the process without bound. */
export const DEFAULT_LIMITER_MAX_KEYS = 200_000;
/** Queue entries looked at per write: more than a write adds, so the queues follow the live keys. */
const SWEEP_PER_WRITE = 4;

interface Counter {
  key: string;
  points: number;
  resetAt: number;
}

/** Windows of one length in start order, which is also the order they end in. An entry whose
 *  key has been deleted or restarted since is stale and skipped. */
interface Queue {
  items: Counter[];
  head: number;
}

/** Fixed-window counters in a Map. Each window length also queues its counters in start order,
 *  so ended windows are dropped from the front of the queues a few per write, never by a scan
 *  (a Map iterated from its front after many deletes skips every deleted slot). Past
 *  `maxKeys`, the counter whose window ends first is dropped: under such a flood a dropped
 *  counter restarts, which weakens a limit for a moment rather than taking the process down. */
export function memoryLimiterStore(maxKeys = DEFAULT_LIMITER_MAX_KEYS): LimiterStore {
  const counters = new Map<string, Counter>();
  /** Window length -> its queue; bucket lengths are few (one per throttle bucket). */
  const queues = new Map<number, Queue>();

  const live = (key: string, now: Date) => {
    const c = counters.get(key);
    return c && now.getTime() < c.resetAt ? c : undefined;
  };
  const out = (c: Counter): LimiterRecord => ({ points: c.points, resetAt: new Date(c.resetAt) });
  const current = (c: Counter) => counters.get(c.key) === c;

  const shift = (q: Queue) => {
    const c = q.items[q.head++]!;
    if (current(c)) counters.delete(c.key);
    // Keeps the array to about twice the entries still queued.
    if (q.head >= 1024 && q.head * 2 >= q.items.length) {
      q.items = q.items.slice(q.head);
      q.head = 0;
    }
  };
  /** Looks at up to `n` entries at the front of `q`, dropping ended or stale ones. */
  const sweep = (q: Queue, n: number, t: number) => {
    for (; n > 0 && q.head < q.items.length; n--) {
      const c = q.items[q.head]!;
      if (c.resetAt > t && current(c)) return;
      shift(q);
    }
  };
  /** Drops the counter whose window ends first, over every length. */
  const evictOne = () => {
    let first: Queue | undefined;
    for (const q of queues.values()) {
      while (q.head < q.items.length && !current(q.items[q.head]!)) shift(q);
      if (q.head < q.items.length && (!first || q.items[q.head]!.resetAt < first.items[first.head]!.resetAt))
        first = q;
    }
    if (first) shift(first);
  };

  return {
    async consume(key, points, durationMs, now) {
      const c = live(key, now);
      if (points < 0) {
        if (!c) return { points: 0, resetAt: new Date(now) };
        c.points = Math.max(0, c.points + points);
        return out(c);
      }
      if (c) {
        c.points += points;
        return out(c);
      }
      let q = queues.get(durationMs);
      if (!q) {
        q = { items: [], head: 0 };
        queues.set(durationMs, q);
      }
      sweep(q, SWEEP_PER_WRITE, now.getTime());
      if (!counters.has(key) && counters.size >= maxKeys) evictOne();
      const fresh = { key, points, resetAt: now.getTime() + durationMs };
      counters.set(key, fresh);
      q.items.push(fresh);
      return out(fresh);
    },
    async get(key, now) {
      const c = live(key, now);
      return c ? out(c) : null;
    },
    async delete(key) {
      counters.delete(key);
    },
  };
}
