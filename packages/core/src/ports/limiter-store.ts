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
  /** Several distinct keys, each with its `limit`, checked in entry order in one call (a
   *  login counts three buckets; on Postgres one statement). When every key's counter stays
   *  within its limit after the add, each is counted as `consume` would (`points` >= 1) and its
   *  counter answers. Else the first key in order that would go over is counted alone: it
   *  answers its counter, and every other key answers null, uncounted. So a refused attempt
   *  never holds points in the other keys, not even for a moment. The results come in entry
   *  order. Each key's add is atomic as in `consume`; the set is not one unit. A store may,
   *  rarely, count every key and answer one of them over its limit (Postgres, when a key's
   *  first window is started by a concurrent call in the same instant); the caller then gives
   *  the others back. */
  consumeMany(
    entries: ReadonlyArray<{ key: string; points: number; durationMs: number; limit: number }>,
    now: Date,
  ): Promise<Array<LimiterRecord | null>>;
  /** After a success, in one call: gives `points` back to each `refund` key as a negative
   *  `consume` would (a live counter only, never below zero), and ends the windows of the
   *  `clear` keys as `delete` would, answering what each `clear` key held (its live counter
   *  at `now`, else null), in order. Keys are distinct across both lists. Each key's change is
   *  atomic with its answer (a concurrent add lands before, and is answered, or after, and
   *  stays); the set is not one unit. */
  settle(
    refund: ReadonlyArray<{ key: string; points: number }>,
    clear: readonly string[],
    now: Date,
  ): Promise<Array<LimiterRecord | null>>;
  /** The live counter of `key`, or null (absent or window ended at `now`). */
  get(key: string, now: Date): Promise<LimiterRecord | null>;
  delete(key: string): Promise<void>;
}
