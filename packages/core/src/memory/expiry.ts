/** Time in the in-memory stores: one rule for when a record has ended, and one schedule for
 *  dropping ended records nobody asks for again. */

/** A record whose end is at or before `now` has ended (ends are exclusive, as in Postgres'
 *  `expires_at > now()`). */
export const hasEnded = (end: Date | number, now: Date | number): boolean => +end <= +now;

/** Writes between two sweeps of a store. A sweep scans the store, so once per 256 writes keeps
 *  its cost per write small, and what a store holds stays within what is live plus what ended
 *  since its last sweep. */
const SWEEP_EVERY = 256;

/** Calls `sweep(now)` on every 256th call: a store calls it on each write. */
export function sweepEvery(sweep: (now: Date) => void): (now: Date) => void {
  let writes = 0;
  return (now) => {
    if (++writes % SWEEP_EVERY === 0) sweep(now);
  };
}

/** Deletes the entries of `map` whose end (`endOf`) has passed at `now`. */
export function dropEnded<K, V>(map: Map<K, V>, endOf: (v: V) => Date | number, now: Date): void {
  for (const [k, v] of map) if (hasEnded(endOf(v), now)) map.delete(k);
}
