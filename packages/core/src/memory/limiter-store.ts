import type { LimiterRecord, LimiterStore } from '../ports/limiter-store.js';

/** Counters kept at most (about 300 bytes each): a flood of distinct keys (a `forgot` per
 *  invented address, from many client addresses) cannot grow the process without bound. */
export const DEFAULT_LIMITER_MAX_KEYS = 200_000;
/** Queue entries looked at per write: more than a write adds, so the queues follow the live keys. */
const SWEEP_PER_WRITE = 4;

/** Counters of a rank are dropped only when none of a lower rank is left: 1 point, 2-3, 4-7,
 *  8 and more. A flood of fresh keys (1 point each) then only pushes out other fresh keys, and
 *  a counter near its limit (a guessed password's `login:email` at 8+) outlives any flood that
 *  does not spend 8 requests on each of its keys. */
const rankOf = (points: number) => (points <= 1 ? 0 : points < 4 ? 1 : points < 8 ? 2 : 3);

interface Counter {
  key: string;
  points: number;
  resetAt: number;
  /** Window length, ms. */
  length: number;
  /** The queue this counter is current in; entries left in another are stale. */
  queue: Queue;
}

/** Counters of one rank and window length, in the order they were queued: the order their
 *  windows end in for fresh keys (rank 0). An entry whose key has been deleted, restarted or
 *  moved up a rank since is stale and skipped. */
interface Queue {
  rank: number;
  items: Counter[];
  head: number;
}

/** Fixed-window counters in a Map. Ended windows are dropped from the front of the queues a
 *  few per write, never by a scan (a Map iterated from its front after many deletes skips every
 *  deleted slot). Past `maxKeys` one counter is dropped: an ended one if any, else one of the
 *  lowest rank, whose window ends first. A dropped counter restarts, which weakens that limit
 *  for a moment; running out of memory would take every limit down with the process. */
export function memoryLimiterStore(maxKeys = DEFAULT_LIMITER_MAX_KEYS): LimiterStore {
  const counters = new Map<string, Counter>();
  /** `${rank}:${length}` -> its queue (a handful: four ranks, one length per throttle bucket). */
  const queues = new Map<string, Queue>();

  const live = (key: string, now: Date) => {
    const c = counters.get(key);
    return c && now.getTime() < c.resetAt ? c : undefined;
  };
  const out = (c: Counter): LimiterRecord => ({ points: c.points, resetAt: new Date(c.resetAt) });
  const current = (q: Queue, c: Counter) => c.queue === q && counters.get(c.key) === c;

  /** Queues `c` where its points and window length put it. */
  const place = (c: Counter) => {
    const rank = rankOf(c.points);
    const id = `${rank}:${c.length}`;
    let q = queues.get(id);
    if (!q) {
      q = { rank, items: [], head: 0 };
      queues.set(id, q);
    }
    c.queue = q;
    q.items.push(c);
    return q;
  };
  const shift = (q: Queue) => {
    const c = q.items[q.head++]!;
    if (current(q, c)) counters.delete(c.key);
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
      if (c.resetAt > t && current(q, c)) return;
      shift(q);
    }
  };
  /** Drops one counter: an ended window first, else the lowest rank, then the earliest end. */
  const evictOne = (t: number) => {
    let best: { q: Queue; ended: boolean; resetAt: number } | undefined;
    for (const q of queues.values()) {
      while (q.head < q.items.length && !current(q, q.items[q.head]!)) shift(q);
      const c = q.items[q.head];
      if (!c) continue;
      const ended = c.resetAt <= t;
      const first =
        !best ||
        (ended !== best.ended
          ? ended
          : q.rank !== best.q.rank
            ? q.rank < best.q.rank
            : c.resetAt < best.resetAt);
      if (first) best = { q, ended, resetAt: c.resetAt };
    }
    if (best) shift(best.q);
  };

  const store: LimiterStore = {
    async consume(key, points, durationMs, now) {
      const c = live(key, now);
      if (points < 0) {
        if (!c) return { points: 0, resetAt: new Date(now) };
        c.points = Math.max(0, c.points + points);
        return out(c);
      }
      if (c) {
        c.points += points;
        // The queue it moves to is swept too: ended counters of every rank leave a few per write.
        if (rankOf(c.points) > c.queue.rank) sweep(place(c), SWEEP_PER_WRITE, now.getTime());
        return out(c);
      }
      const t = now.getTime();
      const fresh = { key, points, resetAt: t + durationMs, length: durationMs } as Counter;
      if (!counters.has(key) && counters.size >= maxKeys) evictOne(t);
      counters.set(key, fresh);
      sweep(place(fresh), SWEEP_PER_WRITE, t);
      return out(fresh);
    },
    async consumeMany(entries, now) {
      const records: LimiterRecord[] = [];
      for (const e of entries) records.push(await store.consume(e.key, e.points, e.durationMs, now));
      return records;
    },
    async settle(refund, clear, now) {
      for (const r of refund) await store.consume(r.key, -r.points, 0, now);
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
