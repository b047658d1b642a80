import type { Stores } from '@postern/core';
import { describeStoreContract, TestClock } from '@postern/testkit';
import { afterAll, afterEach } from 'vitest';
import { postgresStores } from '../src/stores.js';
import { openTestDatabase } from './helpers/test-db.js';

// The shared storage-port contract, unchanged, on Postgres (or PGlite when no server is
// reachable). This file has a schema of its own; every test starts from empty tables.
const db = await openTestDatabase('contract', { max: 10 });
const opened: Stores[] = [];

afterEach(async () => {
  for (const s of opened.splice(0)) await s.close?.();
});
afterAll(() => db.close());

describeStoreContract(db.kind === 'server' ? 'postgres' : 'postgres (PGlite)', async () => {
  await db.reset();
  const clock = new TestClock();
  // PGlite has one connection: a LISTEN client would hold it, so wake-ups are polled there.
  const stores = postgresStores({ pool: db.pool, schema: db.schema, clock, listen: db.kind === 'server' });
  opened.push(stores);
  return { stores, clock };
});
