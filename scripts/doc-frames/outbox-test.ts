// Frame for fragments inside a test of a host's outbox consumers: `ph` was created with
// `clock` (a TestClock), and the test awaits the fragment.
import type { Postern as __Postern } from '@postern/core';
import type { TestClock as __TestClock } from '@postern/testkit';

declare const ph: __Postern;
declare const clock: __TestClock;

/* fragment */
