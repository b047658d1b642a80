import type { Gatehouse } from '@gatehouse/core';
import { gatehouseErrorHandler, gatehousePlugin, principalOf, requireAuth } from '@gatehouse/fastify';
import { HOST_AUTH_ROUTE, HOST_FRESH_ROUTE, HOST_ROUTE } from '@gatehouse/testkit';
import Fastify from 'fastify';

/** The HTTP contract's host app on Fastify (memory and Postgres suites alike): the plugin,
 *  the host's routes, and the adapter's error handler. */
export async function fastifyHost(gh: Gatehouse) {
  const app = Fastify();
  await app.register(gatehousePlugin, { gatehouse: gh });
  app.get(HOST_ROUTE.path, async (_req, reply) => reply.type('text/plain').send(HOST_ROUTE.body));
  app.get(HOST_AUTH_ROUTE.path, { preHandler: requireAuth(gh) }, async (req) => ({
    userId: principalOf(req).userId,
  }));
  app.post<{ Body: { password: string } }>(
    HOST_FRESH_ROUTE.path,
    { preHandler: requireAuth(gh) },
    async (req) => {
      await gh.auth.requireFreshAuth(principalOf(req), { password: req.body.password });
      return { fresh: true };
    },
  );
  app.setErrorHandler(gatehouseErrorHandler());
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url, close: () => app.close() };
}
