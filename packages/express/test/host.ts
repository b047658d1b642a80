import type { Gatehouse } from '@gatehouse/core';
import { gatehouseErrors, gatehouseRouter, principalOf, requireAuth } from '@gatehouse/express';
import { HOST_AUTH_ROUTE, HOST_FRESH_ROUTE, HOST_ROUTE, listen } from '@gatehouse/testkit';
import express from 'express';

/** The HTTP contract's host app on Express (memory and Postgres suites alike): Gatehouse
 *  first, then the host's routes, then the adapter's error handler. */
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
