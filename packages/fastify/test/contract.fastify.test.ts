import { describeHttpContract } from '@postern/testkit';
import { fastifyHost } from './host.js';

describeHttpContract('fastify', fastifyHost);
