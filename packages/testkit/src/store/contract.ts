import type { Stores } from '@postern/core';
import { describe } from 'vitest';
import type { TestClock } from '../test-clock.js';
import { authStoreContract } from './auth.contract.js';
import { inboxStoreContract } from './inbox.contract.js';
import { mfaStoreContract } from './mfa.contract.js';
import { outboxStoreContract } from './outbox.contract.js';

/** Fresh stores (and the clock they were given) for one test. */
export type StoreSetup = () => Promise<{ stores: Stores; clock: TestClock }>;

/** Registers the storage-port contract suite against one implementation (memory, Postgres).
 *  Each area adds its contract here, one line each. */
export function describeStoreContract(name: string, setup: StoreSetup): void {
  describe(`store contract: ${name}`, () => {
    outboxStoreContract(setup);
    mfaStoreContract(setup);
    inboxStoreContract(setup);
    authStoreContract(setup);
  });
}
