import { systemClock } from '../ports/clock.js';
import { warningsLogger } from '../ports/logger.js';
import type { Stores } from '../ports/stores.js';
import { integerOption } from '../util/integer-option.js';
import { memoryAuthStores } from './auth-stores.js';
import { DEFAULT_MAX_MAIL_EVENTS, memoryInboxStores } from './inbox-stores.js';
import { DEFAULT_LIMITER_MAX_KEYS } from './limiter-store.js';
import { memoryMfaStores } from './mfa-stores.js';
import type { MemoryStoresOptions } from './options.js';
import { DEFAULT_MAX_FINISHED_EVENTS } from './outbox-store.js';
import { memoryWebhookStores } from './webhook-stores.js';

export { memoryFiles } from './files.js';

export type { MemoryStoresOptions } from './options.js';

/** In-memory implementations of every storage port: the embedded default, and the readable
 *  statement of what each port does. One process only; state dies with it. Each method is
 *  atomic (it runs without an `await` between its read and its write), which is what the store
 *  contract demands. Each file says what a real store must do better; all of them must be
 *  durable, shared by every process, and atomic by statement or transaction, not by the event
 *  loop. */
export function memoryStores(opts: MemoryStoresOptions = {}): Stores {
  const o = {
    clock: opts.clock ?? systemClock,
    limiterMaxKeys: integerOption(
      'memoryStores: limiterMaxKeys',
      opts.limiterMaxKeys,
      DEFAULT_LIMITER_MAX_KEYS,
    ),
    maxFinishedEvents: integerOption(
      'memoryStores: maxFinishedEvents',
      opts.maxFinishedEvents,
      DEFAULT_MAX_FINISHED_EVENTS,
    ),
    maxMailEvents: integerOption('memoryStores: maxMailEvents', opts.maxMailEvents, DEFAULT_MAX_MAIL_EVENTS),
    logger: opts.logger ?? warningsLogger,
  };
  // Deleting a user drops its MFA data too, as the Postgres user store does.
  const { dropUser, ...mfa } = memoryMfaStores();
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
