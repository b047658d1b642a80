import { ConfigError, isStoreError, posternProblem, silentLogger } from '@postern/core';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isUnavailable } from '../src/db.js';
import { postgresStores } from '../src/stores.js';
import { NO_SERVER_REASON, openTestDatabase, serverUrl, type TestDatabase } from './helpers/test-db.js';

let db: TestDatabase;
const server = await serverUrl();
const skipNote = server ? '' : ` (skipped: ${NO_SERVER_REASON})`;
const now = new Date('2030-01-01T00:00:00Z');

beforeAll(async () => {
  db = await openTestDatabase('db');
});
afterAll(() => db?.close());
beforeEach(() => db.reset());

const stores = () => postgresStores({ pool: db.pool, schema: db.schema, listen: false });

describe('postgresStores arguments', () => {
  it('takes the pool itself as well as an options object', async () => {
    const s = postgresStores(db.pool, { schema: db.schema, listen: false });
    const { id } = await s.outbox.publish({ name: 'n', payload: 'p' }, now);
    expect(await stores().outbox.get(id)).toMatchObject({ id, name: 'n' });
  });

  it('refuses anything else with a ConfigError at once', () => {
    for (const bad of [undefined, {}, { pool: {} }, { query: () => {} }]) {
      expect(() => postgresStores(bad as never)).toThrow(ConfigError);
    }
    // A misspelt option would silently fall back to its default (the default schema's tables).
    expect(() => postgresStores({ pool: db.pool, shema: db.schema } as never)).toThrow(
      /unknown option\(s\) shema/,
    );
    expect(() => postgresStores(db.pool, { schema: db.schema, lisen: false } as never)).toThrow(ConfigError);
  });
});

describe('transaction', () => {
  it('commits every write made through the transaction stores', async () => {
    const s = stores();
    const id = await s.transaction(
      async (tx) => (await tx.outbox.publish({ name: 'n', payload: 'p' }, now)).id,
    );
    expect(await s.outbox.get(id)).toMatchObject({ id, status: 'pending' });
  });

  it('rolls every write back when the function throws, and rethrows its error as it is', async () => {
    const s = stores();
    let id = '';
    const boom = new Error('boom');
    await expect(
      s.transaction(async (tx) => {
        id = (await tx.outbox.publish({ name: 'n', payload: 'p' }, now)).id;
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(await s.outbox.get(id)).toBeNull();
  });

  it('lets a nested transaction join the outer one, so an outer failure undoes the inner writes', async () => {
    const s = stores();
    let inner = '';
    await expect(
      s.transaction(async (tx) => {
        inner = await tx.transaction(
          async (tx2) => (await tx2.outbox.publish({ name: 'n', payload: 'p' }, now)).id,
        );
        throw new Error('after the inner transaction');
      }),
    ).rejects.toThrow('after the inner transaction');
    expect(await s.outbox.get(inner)).toBeNull();
  });

  // One PGlite connection: a second reader would wait for the open transaction.
  it.skipIf(!server)(`keeps uncommitted writes invisible outside the transaction${skipNote}`, async () => {
    const s = stores();
    await s.transaction(async (tx) => {
      const { id } = await tx.outbox.publish({ name: 'n', payload: 'p' }, now);
      expect(await s.outbox.get(id)).toBeNull();
      expect(await tx.outbox.get(id)).not.toBeNull();
    });
  });
});

describe('text Postgres cannot hold', () => {
  it('finds nothing for an id with a NUL character and stores NUL in text as U+FFFD', async () => {
    const s = stores();
    expect(await s.users.findById('a\0b')).toBeNull();
    const { id } = await s.outbox.publish({ name: 'n\0', payload: '{"subject":"x\0y"}' }, now);
    expect(await s.outbox.get(id)).toMatchObject({ name: 'n\uFFFD', payload: '{"subject":"x\uFFFDy"}' });
  });
});

describe('database unavailable', () => {
  it('surfaces a refused connection as StoreError, which the core answers 503 with Retry-After', async () => {
    const dead = new pg.Pool({
      connectionString: 'postgres://postgres@127.0.0.1:1/none',
      connectionTimeoutMillis: 2000,
    });
    const s = postgresStores({ pool: dead, listen: false });
    const err = await s.outbox.get('x').catch((e: unknown) => e);
    expect(isStoreError(err)).toBe(true);
    const answer = posternProblem(err);
    expect(answer).toMatchObject({ status: 503, headers: { 'retry-after': '1' } });
    expect(JSON.parse(String(answer?.body))).toMatchObject({ code: 'unavailable' });
    const txErr = await s.transaction(async () => 1).catch((e: unknown) => e);
    expect(isStoreError(txErr)).toBe(true);
    await dead.end();
  });

  it('says to run the migrations when the schema has no tables', async () => {
    const s = postgresStores({
      pool: db.pool,
      schema: `never_migrated_${db.schema}`.slice(0, 60),
      listen: false,
    });
    const err = await s.users.findById('x').catch((e: unknown) => e);
    expect(isStoreError(err)).toBe(false);
    expect((err as Error).message).toMatch(
      /does not exist: has migrate\(pool, \{ schema \}\).* run for this schema\?/,
    );
  });

  it('keeps programming errors (bad SQL, constraint bugs) out of StoreError', () => {
    expect(isUnavailable({ severity: 'ERROR', code: '42601', message: 'syntax error' })).toBe(false);
    expect(isUnavailable({ severity: 'ERROR', code: '23505', message: 'duplicate key' })).toBe(false);
    expect(isUnavailable({ severity: 'FATAL', code: '57P01', message: 'terminating connection' })).toBe(true);
    expect(isUnavailable({ severity: 'ERROR', code: '40001', message: 'could not serialize' })).toBe(true);
    expect(isUnavailable(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe(
      true,
    );
    expect(isUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
  });

  it.skipIf(!server)(`maps a connection killed by the server to StoreError${skipNote}`, async () => {
    const app = `ph_kill_${db.schema}`;
    const pool = new pg.Pool({ connectionString: db.url!, max: 1, application_name: app });
    const s = postgresStores({ pool, schema: db.schema, listen: false, logger: silentLogger });
    // A transaction holds the pool's only connection; the server ends it mid-way.
    const err = await s
      .transaction(async (tx) => {
        await tx.outbox.publish({ name: 'n', payload: 'p' }, now);
        await db.pool.query(
          'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
          [app],
        );
        await tx.outbox.get('x');
      })
      .catch((e: unknown) => e);
    expect(isStoreError(err)).toBe(true);
    // The broken client was discarded: the pool serves the next query on a new connection.
    expect(await s.outbox.get('missing')).toBeNull();
    await pool.end();
  });
});
