import { randomInt } from 'node:crypto';

/** `randomInt` takes ranges below 2^48. */
const MAX_RANGE = 2 ** 47;

/** Exponential backoff with full jitter (AWS Architecture Blog, "Exponential Backoff And
 *  Jitter"): after the `attempt`-th failure, wait a uniform random time in
 *  [0, min(maxMs, baseMs * 2^(attempt-1))]. Full jitter spreads a burst of failures out. */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(Math.max(attempt - 1, 0), 52), MAX_RANGE);
  return randomInt(0, Math.floor(ceiling) + 1);
}
