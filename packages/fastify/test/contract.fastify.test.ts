import { gatehousePlugin, requireAuth as requireFastifyAuth } from '@gatehouse/fastify';
import { describeHttpContract, HOST_AUTH_ROUTE, HOST_ROUTE } from '@gatehouse/testkit';
import Fastify from 'fastify';

describeHttpContract('fastify', async (gh) => {
  const app = Fastify();
  await app.register(gatehousePlugin, { gatehouse: gh });
  app.get(HOST_ROUTE.path, async (_req, reply) => reply.type('text/plain').send(HOST_ROUTE.body));
  app.get(HOST_AUTH_ROUTE.path, { preHandler: requireFastifyAuth(gh) }, async (req) => ({
    userId: req.principal!.userId,
  }));
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url, close: () => app.close() };
});
