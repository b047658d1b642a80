import { describeHttpContract } from '@postern/testkit';
import { afterAll } from 'vitest';
import { expressHost } from './helpers/hosts.js';
import { contractStores, openTestDatabase } from './helpers/test-db.js';

// The auth and MFA scenarios of the HTTP contract on a pool of exactly one connection (PGlite
// has nothing else; on a server the pool is capped at one). A flow that asks the pool for a
// second connection while its own transaction holds the only one waits forever, so every
// transaction body must use the transaction's stores (password reset and change void pending
// MFA logins inside theirs).
const db = await openTestDatabase('one_conn', { max: 1, migrate: false });
const schemas = contractStores(db, { listen: false });

afterAll(async () => {
  await schemas.dropAll();
  await db.close();
});

describeHttpContract(
  `express on one ${db.kind === 'server' ? 'pooled connection' : 'PGlite connection'}`,
  expressHost,
  { stores: schemas.stores, areas: ['auth', 'mfa'] },
);
