import type { Stores } from '@gatehouse/core';
import { gatehouseRouter } from '@gatehouse/express';
import { gatehousePlugin } from '@gatehouse/fastify';
import { describeHttpContract, HOST_ROUTE, listen, type TestClock } from '@gatehouse/testkit';
import express from 'express';
import Fastify from 'fastify';
import { afterAll, describe, it } from 'vitest';
import { migrate } from '../src/migrate.js';
import { postgresStores } from '../src/stores.js';
import { emptyTables, NO_SERVER_REASON, openTestDatabase, schemaName, serverUrl } from './helpers/test-db.js';

// The shared HTTP contract, unchanged, through both adapters on Postgres stores (PGlite when
// no server is reachable). Every Gatehouse the suite sets up gets an empty schema of its own,
// because a scenario group keeps its instance while later setups start new ones. Migrating is
// slow DDL, so a schema whose Gatehouse closed is emptied and handed to the next setup.
//
// PGlite has a single connection, and a flow that reaches for the pool while its own transaction
// holds that connection would wait forever; the suite therefore runs on a real server only.
const server = await serverUrl();
const db = server ? await openTestDatabase('http', { max: 10, migrate: false }) : null;
const schemas: string[] = [];
const free: string[] = [];

afterAll(async () => {
  if (!db) return;
  for (const s of schemas) await db.pool.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
  await db.close();
});

async function emptySchema(): Promise<string> {
  if (!db) throw new Error('no server');
  const reused = free.pop();
  if (reused) {
    await emptyTables(db.pool, reused);
    return reused;
  }
  const schema = schemaName('http');
  schemas.push(schema);
  await migrate(db.pool, { schema });
  return schema;
}

async function freshStores(clock: TestClock): Promise<Stores> {
  if (!db) throw new Error('no server');
  const schema = await emptySchema();
  const stores = postgresStores({ pool: db.pool, schema, clock });
  return {
    ...stores,
    async close() {
      await stores.close?.();
      free.push(schema);
    },
  };
}

if (!db) {
  describe('HTTP contract on Postgres', () => {
    it.skip(`runs both adapters on Postgres stores (skipped: ${NO_SERVER_REASON})`, () => {});
  });
}

if (db)
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
    { stores: freshStores },
  );

if (db)
  describeHttpContract(
    'fastify on postgres',
    async (gh) => {
      const app = Fastify();
      await app.register(gatehousePlugin, { gatehouse: gh });
      app.get(HOST_ROUTE.path, async (_req, reply) => reply.type('text/plain').send(HOST_ROUTE.body));
      const url = await app.listen({ port: 0, host: '127.0.0.1' });
      return { url, close: () => app.close() };
    },
    { stores: freshStores },
  );
