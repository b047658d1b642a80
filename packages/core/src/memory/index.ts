import { type Clock, systemClock } from '../ports/clock.js';
import { type Logger, warningsLogger } from '../ports/logger.js';
import type { Stores } from '../ports/stores.js';
import { wholeOption } from '../util/whole-option.js';
import { memoryAuthStores } from './auth-stores.js';
import { DEFAULT_MAX_MAIL_EVENTS, memoryInboxStores } from './inbox-stores.js';
import { DEFAULT_LIMITER_MAX_KEYS } from './limiter-store.js';
import { memoryMfaStores } from './mfa-stores.js';
import { DEFAULT_MAX_FINISHED_EVENTS } from './outbox-store.js';
import { memoryWebhookStores } from './webhook-stores.js';

export { memoryFiles } from './files.js';

export interface MemoryStoresOptions {
  clock?: Clock;
  /** Throttle counters kept at most (default 200,000, about 60 MB); past it, one is dropped: an
   *  ended one, else one with the fewest points, whose window ends first. */
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

/** In-memory implementations of every storage port: the embedded default.
 *  One process only; state dies with it. Each method is atomic (it runs without an
 *  `await` between its read and its write), which is what the store contract demands. */
export function memoryStores(opts: MemoryStoresOptions = {}): Stores {
  const o = {
    clock: opts.clock ?? systemClock,
    limiterMaxKeys: wholeOption(
      'memoryStores: limiterMaxKeys',
      opts.limiterMaxKeys,
      DEFAULT_LIMITER_MAX_KEYS,
    ),
    maxFinishedEvents: wholeOption(
      'memoryStores: maxFinishedEvents',
      opts.maxFinishedEvents,
      DEFAULT_MAX_FINISHED_EVENTS,
    ),
    maxMailEvents: wholeOption('memoryStores: maxMailEvents', opts.maxMailEvents, DEFAULT_MAX_MAIL_EVENTS),
    logger: opts.logger ?? warningsLogger,
  };
  // Deleting a user drops its MFA data too, as the Postgres user store does.
  const { dropUser, ...mfa } = memoryMfaStores(o);
  const stores: Stores = {
    ...memoryAuthStores(o, dropUser),
    ...mfa,
    ...memoryWebhookStores(o),
    ...memoryInboxStores(o),
    // One process, one event loop: the stores themselves are the transaction.
    transaction: (fn) => fn(stores),
  };
  return stores;
}
