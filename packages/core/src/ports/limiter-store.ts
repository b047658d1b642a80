/** A limiter counter: points consumed in the current fixed window. */
export interface LimiterRecord {
  points: number;
  /** End of the window; the counter restarts from zero after it. */
  resetAt: Date;
}

/** Counters behind every throttle (docs/auth.md, Throttling): auth/throttle.ts adds a point per
 *  attempt and compares the counter with the bucket's limit. Fixed windows per key. Keys are built by the caller
 *  (`<bucket>:<canonical email | address | id>`). Implementations: memory, Postgres (an upsert
 *  `ON CONFLICT ... DO UPDATE` that restarts the window when `reset_at <= now`). */
export interface LimiterStore {
  /** Atomically adds `points` to `key` and returns the counter after the add. When the key is
   *  absent or its window has ended at `now`, a new window of `durationMs` starts at `now` with
   *  `points`. Concurrent callers never lose an increment. A negative `points` is a refund: it
   *  only lowers a live counter (never below zero) and never starts a window; without a live
   *  counter it changes nothing and returns `{ points: 0, resetAt: now }`. */
  consume(key: string, points: number, durationMs: number, now: Date): Promise<LimiterRecord>;
  /** The live counter of `key`, or null (absent or window ended at `now`). */
  get(key: string, now: Date): Promise<LimiterRecord | null>;
  delete(key: string): Promise<void>;
}
