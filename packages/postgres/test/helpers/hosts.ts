/** Host apps for the HTTP contract on Postgres: the adapters' own contract hosts. */
export { expressHost } from '../../../express/test/host.js';
export { fastifyHost } from '../../../fastify/test/host.js';
