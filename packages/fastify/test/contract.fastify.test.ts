import { describeHttpContract } from '@gatehouse/testkit';
import { fastifyHost } from './host.js';

describeHttpContract('fastify', fastifyHost);
