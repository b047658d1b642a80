import type { Stores } from '@postern/core';
import type { TestClock } from '../test-clock.js';

/** Fresh stores (and the clock they were given) for one test. */
export type StoreSetup = () => Promise<{ stores: Stores; clock: TestClock }>;
