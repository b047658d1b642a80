import type { Postern } from '@postern/core';
import { posternErrorHandler, posternPlugin, principalOf, requireAuth } from '@postern/fastify';
import { HOST_AUTH_ROUTE, HOST_FRESH_ROUTE, HOST_ROUTE } from '@postern/testkit';
import Fastify from 'fastify';

/** The HTTP contract's host app on Fastify (memory and Postgres suites alike): the plugin,
 *  the host's routes, and the adapter's error handler. */
export async function fastifyHost(ph: Postern) {
  const app = Fastify();
  await app.register(posternPlugin, { postern: ph });
  app.get(HOST_ROUTE.path, async (_req, reply) => reply.type('text/plain').send(HOST_ROUTE.body));
  app.get(HOST_AUTH_ROUTE.path, { preHandler: requireAuth(ph) }, async (req) => ({
    userId: principalOf(req).userId,
  }));
  app.post<{ Body: { password: string } }>(
    HOST_FRESH_ROUTE.path,
    { preHandler: requireAuth(ph) },
    async (req) => {
      await ph.auth.requireFreshAuth(principalOf(req), { password: req.body.password });
      return { fresh: true };
    },
  );
  app.setErrorHandler(posternErrorHandler());
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url, close: () => app.close() };
}
