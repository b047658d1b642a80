// Frame for fragments that use a configured Postern instance `ph`.
import type { Postern as __Postern } from '@postern/core';

declare const ph: __Postern;

/* fragment */
