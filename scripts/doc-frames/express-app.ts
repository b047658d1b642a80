// Frame for fragments that add to an Express app with Postern mounted (`app`, `ph`).
import type { Postern as __Postern } from '@postern/core';
import type { Express as __Express } from 'express';

declare const ph: __Postern;
declare const app: __Express;

/* fragment */
