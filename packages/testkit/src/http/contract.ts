import { describe } from 'vitest';
import { authScenarios } from './auth.scenarios.js';
import { browserScenarios } from './browser.scenarios.js';
import { coreScenarios } from './core.scenarios.js';
import {
  createHttpEnv,
  type HttpContractArea,
  type HttpContractOptions,
  type HttpEnv,
  type Mount,
} from './harness.js';
import { inboxScenarios } from './inbox.scenarios.js';
import { mfaScenarios } from './mfa.scenarios.js';
import { webhookScenarios } from './webhook.scenarios.js';

/** Each area's scenario function, one line each, in run order. */
const SCENARIOS: Record<HttpContractArea, (env: HttpEnv) => void> = {
  core: coreScenarios,
  auth: authScenarios,
  browser: browserScenarios,
  mfa: mfaScenarios,
  webhook: webhookScenarios,
  inbox: inboxScenarios,
};

/** Registers the HTTP contract suite against one adapter: every area, or
 *  `opts.areas`. */
export function describeHttpContract(name: string, mount: Mount, opts: HttpContractOptions = {}): void {
  const env = createHttpEnv(name, mount, opts);
  describe(`HTTP contract: ${name}`, () => {
    for (const area of Object.keys(SCENARIOS) as HttpContractArea[])
      if (!opts.areas || opts.areas.includes(area)) SCENARIOS[area](env);
  });
}
