import { describeHttpContract } from '@postern/testkit';
import { afterAll, describe, it } from 'vitest';
import { expressHost, fastifyHost } from './helpers/hosts.js';
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

if (schemas) describeHttpContract('express on postgres', expressHost, { stores: schemas.stores });

if (schemas) describeHttpContract('fastify on postgres', fastifyHost, { stores: schemas.stores });
