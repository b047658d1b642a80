import { describe } from 'vitest';
import { authScenarios } from './auth.scenarios.js';
import { coreScenarios } from './core.scenarios.js';
import { createHttpEnv, type HttpContractOptions, type Mount } from './harness.js';
import { inboxScenarios } from './inbox.scenarios.js';
import { mfaScenarios } from './mfa.scenarios.js';
import { webhookScenarios } from './webhook.scenarios.js';

/** Registers the whole HTTP contract suite (CONTRACT.md) against one adapter.
 *  Each area adds its scenario function here. */
export function describeHttpContract(name: string, mount: Mount, opts: HttpContractOptions = {}): void {
  const env = createHttpEnv(name, mount, opts);
  describe(`HTTP contract: ${name}`, () => {
    // area scenarios are registered here, one line each, e.g. authScenarios(env);
    coreScenarios(env);
    authScenarios(env);
    mfaScenarios(env);
    webhookScenarios(env);
    inboxScenarios(env);
  });
}
