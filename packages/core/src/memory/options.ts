import type { Clock } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';

export interface MemoryStoresOptions {
  clock?: Clock;
  /** Throttle counters kept at most (default 200,000, about 60 MB); when full, an eighth of them
   *  is dropped at once: ended ones first, then those with the fewest points, oldest first (a
   *  warning is logged when live ones go). */
  limiterMaxKeys?: number;
  /** Finished (done or dead) outbox events kept at most, for de-duplication and audit (default
   *  20,000, about 20 MB of delivery events); past it the oldest finished one goes, its dedupe
   *  key with it, and a warning is logged. Pending events are never dropped. */
  maxFinishedEvents?: number;
  /** Mail events (delivery and engagement webhooks) kept at most (default 20,000, about 14
   *  MB); past it the oldest goes, and a warning is logged. */
  maxMailEvents?: number;
  /** Where the warning of a full store goes. Default: warnings to stderr. */
  logger?: Logger;
}
