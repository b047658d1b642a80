import { createPostern, isStoreError, silentLogger } from '@postern/core';
import { recordingLogger } from '@postern/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStores } from '../src/stores.js';
import { NO_SERVER_REASON, openTestDatabase, serverUrl, type TestDatabase } from './helpers/test-db.js';

const server = await serverUrl();
const PASSWORD = 'correct horse battery staple 42';

let db: TestDatabase;
const pools: pg.Pool[] = [];
beforeAll(async () => {
  db = await openTestDatabase('timeouts');
});
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await db?.close();
});

function poolWith(config: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool({ connectionString: db.url!, max: 4, ...config });
  pool.on('error', () => {});
  pools.push(pool);
  return pool;
}

async function timeoutWarnings(config: pg.PoolConfig) {
  const { logger, warnings } = recordingLogger();
  postgresStores({ pool: poolWith(config), schema: db.schema, listen: false, logger });
  await new Promise((r) => setTimeout(r, 300)); // the server's setting is read in the background
  return warnings().filter((e) => e.event === 'db_timeouts');
}

describe.skipIf(!server)(`pool timeouts${server ? '' : ` (skipped: ${NO_SERVER_REASON})`}`, () => {
  it('warns when the pool stops waiting (query_timeout) but the server does not give up first', async () => {
    expect(await timeoutWarnings({ query_timeout: 1_000 })).toEqual([
      expect.objectContaining({ queryTimeoutMs: 1_000, statementTimeoutMs: null }),
    ]);
    expect(await timeoutWarnings({ query_timeout: 1_000, statement_timeout: 2_000 })).toHaveLength(1);
    expect(await timeoutWarnings({ query_timeout: 1_000, statement_timeout: 500 })).toEqual([]);
    // Set on the server side (here per connection; on a role or database alike), it counts too.
    expect(await timeoutWarnings({ query_timeout: 1_000, options: '-c statement_timeout=500' })).toEqual([]);
    expect(await timeoutWarnings({})).toEqual([]);
  });

  it('with statement_timeout under query_timeout, a refresh answered 503 during a lock rotated nothing: the retry works', async () => {
    const ph = createPostern({
      issuer: 'https://timeouts.test',
      audience: 'timeouts',
      stores: postgresStores({
        pool: poolWith({ statement_timeout: 300, query_timeout: 3_000 }),
        schema: db.schema,
        listen: false,
      }),
      logger: silentLogger,
    });
    try {
      const email = `lock-${Date.now()}@example.test`;
      await ph.auth.signup({ name: 'Lock', email, password: PASSWORD });
      const session = await ph.auth.login({ email, password: PASSWORD, refreshToken: true });
      if (!('refreshToken' in session) || !session.refreshToken) throw new Error('expected a refresh token');

      const locker = new pg.Client({ connectionString: db.url! });
      await locker.connect();
      try {
        await locker.query('BEGIN');
        await locker.query(`LOCK TABLE "${db.schema}".refresh_tokens IN ACCESS EXCLUSIVE MODE`);
        const err = await ph.auth.refresh({ refreshToken: session.refreshToken }).catch((e: unknown) => e);
        expect(isStoreError(err)).toBe(true);
        // Held on past the client's query_timeout: a statement still running would commit now.
        await new Promise((r) => setTimeout(r, 3_200));
        await locker.query('COMMIT');
      } finally {
        await locker.end();
      }
      const next = await ph.auth.refresh({ refreshToken: session.refreshToken });
      expect(next.refreshToken).toEqual(expect.any(String));
    } finally {
      await ph.close();
    }
  });
});
