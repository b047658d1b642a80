import { gatehouseRouter } from '@gatehouse/express';
import { gatehousePlugin } from '@gatehouse/fastify';
import { describeHttpContract, HOST_ROUTE, listen } from '@gatehouse/testkit';
import express from 'express';
import Fastify from 'fastify';
import { afterAll, describe, it } from 'vitest';
import { contractStores, NO_SERVER_REASON, openTestDatabase, serverUrl } from './helpers/test-db.js';

// The shared HTTP contract, unchanged, through both adapters on Postgres stores with a pool of
// ten and LISTEN wake-ups, so on a real server only. one-connection.postgres.test.ts runs the
// auth and MFA scenarios on a single connection (PGlite included).
const server = await serverUrl();
const db = server ? await openTestDatabase('http', { max: 10, migrate: false }) : null;
const schemas = db ? contractStores(db) : null;

afterAll(async () => {
  if (!db) return;
  await schemas?.dropAll();
  await db.close();
});

if (!schemas) {
  describe('HTTP contract on Postgres', () => {
    it.skip(`runs both adapters on Postgres stores (skipped: ${NO_SERVER_REASON})`, () => {});
  });
}

if (schemas)
  describeHttpContract(
    'express on postgres',
    async (gh) => {
      const app = express();
      app.use(gatehouseRouter(gh));
      app.get(HOST_ROUTE.path, (_req, res) => {
        res.type('text/plain').send(HOST_ROUTE.body);
      });
      return listen(app);
    },
    { stores: schemas.stores },
  );

if (schemas)
  describeHttpContract(
    'fastify on postgres',
    async (gh) => {
      const app = Fastify();
      await app.register(gatehousePlugin, { gatehouse: gh });
      app.get(HOST_ROUTE.path, async (_req, reply) => reply.type('text/plain').send(HOST_ROUTE.body));
      const url = await app.listen({ port: 0, host: '127.0.0.1' });
      return { url, close: () => app.close() };
    },
    { stores: schemas.stores },
  );
