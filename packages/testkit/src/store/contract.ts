import { describe } from 'vitest';
import { authStoreContract } from './auth.contract.js';
import { inboxStoreContract } from './inbox.contract.js';
import { mfaStoreContract } from './mfa.contract.js';
import { outboxStoreContract } from './outbox.contract.js';
import type { StoreSetup } from './setup.js';

export type { StoreSetup } from './setup.js';

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
