// Frame for fragments that add to a Fastify app with Postern registered (`app`, `ph`), before
// it listens.
import type { Postern as __Postern } from '@postern/core';
import type { FastifyInstance as __FastifyInstance } from 'fastify';

declare const ph: __Postern;
declare const app: __FastifyInstance;

/* fragment */
