import type { Gatehouse } from '@gatehouse/core';
import { gatehouseErrors, gatehouseRouter, principalOf, requireAuth } from '@gatehouse/express';
import {
  gatehouseErrorHandler,
  gatehousePlugin,
  principalOf as principalOfRequest,
  requireAuth as requireFastifyAuth,
} from '@gatehouse/fastify';
import { HOST_AUTH_ROUTE, HOST_FRESH_ROUTE, HOST_ROUTE, listen } from '@gatehouse/testkit';
import express from 'express';
import Fastify from 'fastify';

/** Host apps for the HTTP contract on Postgres: Gatehouse mounted beside one host route. */
export function expressHost(gh: Gatehouse) {
  const app = express();
  app.use(gatehouseRouter(gh));
  app.get(HOST_ROUTE.path, (_req, res) => {
    res.type('text/plain').send(HOST_ROUTE.body);
  });
  app.get(HOST_AUTH_ROUTE.path, requireAuth(gh), (_req, res) => {
    res.json({ userId: principalOf(res).userId });
  });
  app.post(HOST_FRESH_ROUTE.path, requireAuth(gh), express.json(), async (req, res) => {
    await gh.auth.requireFreshAuth(principalOf(res), { password: req.body.password });
    res.json({ fresh: true });
  });
  app.use(gatehouseErrors());
  return listen(app);
}

export async function fastifyHost(gh: Gatehouse) {
  const app = Fastify();
  await app.register(gatehousePlugin, { gatehouse: gh });
  app.get(HOST_ROUTE.path, async (_req, reply) => reply.type('text/plain').send(HOST_ROUTE.body));
  app.get(HOST_AUTH_ROUTE.path, { preHandler: requireFastifyAuth(gh) }, async (req) => ({
    userId: principalOfRequest(req).userId,
  }));
  app.post<{ Body: { password: string } }>(
    HOST_FRESH_ROUTE.path,
    { preHandler: requireFastifyAuth(gh) },
    async (req) => {
      await gh.auth.requireFreshAuth(principalOfRequest(req), { password: req.body.password });
      return { fresh: true };
    },
  );
  app.setErrorHandler(gatehouseErrorHandler());
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url, close: () => app.close() };
}
