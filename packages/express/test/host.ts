import type { Postern } from '@postern/core';
import { posternErrorHandler, posternRouter, principalOf, requireAuth } from '@postern/express';
import { HOST_AUTH_ROUTE, HOST_FRESH_ROUTE, HOST_ROUTE, listen } from '@postern/testkit';
import express from 'express';

/** The HTTP contract's host app on Express (memory and Postgres suites alike): Postern
 *  first, then the host's routes, then the adapter's error handler. */
export function expressHost(ph: Postern) {
  const app = express();
  app.use(posternRouter(ph));
  app.get(HOST_ROUTE.path, (_req, res) => {
    res.type('text/plain').send(HOST_ROUTE.body);
  });
  app.get(HOST_AUTH_ROUTE.path, requireAuth(ph), (_req, res) => {
    res.json({ userId: principalOf(res).userId });
  });
  app.post(HOST_FRESH_ROUTE.path, requireAuth(ph), express.json(), async (req, res) => {
    await ph.auth.requireFreshAuth(principalOf(res), { password: req.body.password });
    res.json({ fresh: true });
  });
  app.use(posternErrorHandler());
  return listen(app);
}
