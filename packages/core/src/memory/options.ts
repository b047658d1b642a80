import type { Clock } from '../ports/clock.js';

export interface MemoryStoresOptions {
  clock?: Clock;
  /** Throttle counters kept at most (default 200,000, about 60 MB); past it, one is dropped: an
   *  ended one, else one with the fewest points, whose window ends first. */
  limiterMaxKeys?: number;
}
