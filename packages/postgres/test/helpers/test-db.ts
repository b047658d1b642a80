import { randomBytes } from 'node:crypto';
import type { Clock, Stores } from '@postern/core';
import pg from 'pg';
import { migrate } from '../../src/migrate.js';
import { postgresStores } from '../../src/stores.js';

/** Where tests get Postgres, in this order: `DATABASE_URL`; the local server at
 *  127.0.0.1:5432 (user postgres, database test, trust auth) when it answers; else PGlite
 *  in-process (one connection, no other processes). `POSTERN_TEST_PGLITE=1` forces PGlite. */
export const LOCAL_URL = 'postgres://postgres@127.0.0.1:5432/test';

export const NO_SERVER_REASON =
  'no Postgres server reachable (set DATABASE_URL, or start one at 127.0.0.1:5432)';

let probed: Promise<string | null> | undefined;

/** The URL of a real server, or null. `DATABASE_URL` is trusted as given (an unreachable one fails loudly). */
export function serverUrl(): Promise<string | null> {
  probed ??= (async () => {
    // Lets the PGlite path be checked on a machine that has a server.
    if (process.env.POSTERN_TEST_PGLITE === '1') return null;
    if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
    const client = new pg.Client({ connectionString: LOCAL_URL, connectionTimeoutMillis: 1500 });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('SELECT 1');
      return LOCAL_URL;
    } catch {
      return null;
    } finally {
      await client.end().catch(() => {});
    }
  })();
  return probed;
}

export interface TestDatabase {
  kind: 'server' | 'pglite';
  /** Connection string (server only). */
  url: string | null;
  pool: pg.Pool;
  /** A schema of its own for this test file, migrated. */
  schema: string;
  /** Empties every Postern table of the schema (fresh state for the next test). */
  reset(): Promise<void>;
  /** Drops the schema and ends the pool. */
  close(): Promise<void>;
}

/** A unique schema name per file (and per process), so files run in parallel. */
export function schemaName(label: string): string {
  const slug = label
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .slice(0, 30);
  return `t_${slug}_${randomBytes(4).toString('hex')}`;
}

const tablesOf = new Map<string, string[]>();

/** Deletes every row of every Postern table in `schema` (the migrations record stays).
 *  DELETE beats TRUNCATE by far on tables this small (no file rewrites, no exclusive locks). */
export async function emptyTables(pool: pg.Pool, schema: string): Promise<void> {
  let tables = tablesOf.get(schema);
  if (!tables) {
    const r = await pool.query(
      `SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename <> 'postern_migrations'`,
      [schema],
    );
    tables = r.rows.map((x: { tablename: string }) => `"${schema}"."${x.tablename}"`);
    tablesOf.set(schema, tables);
  }
  if (tables.length > 0) await pool.query(tables.map((tb) => `DELETE FROM ${tb};`).join(' '));
}

export interface OpenOptions {
  /** Pool size on a real server (default 8). PGlite always has one connection. */
  max?: number;
  /** Skip migrations (migration tests run them themselves). */
  migrate?: boolean;
}

export async function openTestDatabase(label: string, opts: OpenOptions = {}): Promise<TestDatabase> {
  const schema = schemaName(label);
  const url = await serverUrl();
  let pool: pg.Pool;
  let shutdown: () => Promise<void>;
  if (url) {
    // Asynchronous commit: the same visibility and locking, minus a disk flush per commit
    // (tests only; it changes durability after a server crash, nothing a test can see).
    pool = new pg.Pool({ connectionString: url, max: opts.max ?? 8, options: '-c synchronous_commit=off' });
    shutdown = () => pool.end();
  } else {
    const { PGlite } = await import('@electric-sql/pglite');
    const { createPgConfig } = await import('@electric-sql/pglite/node-postgres');
    const lite = new PGlite();
    pool = new pg.Pool(createPgConfig(lite) as unknown as pg.PoolConfig);
    shutdown = async () => {
      await pool.end();
      await lite.close();
    };
  }
  pool.on('error', () => {});
  if (opts.migrate !== false) await migrate(pool, { schema });
  return {
    kind: url ? 'server' : 'pglite',
    url,
    pool,
    schema,
    reset: () => emptyTables(pool, schema),
    async close() {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
      await shutdown();
    },
  };
}

/** Stores for the HTTP contract: every Postern it sets up gets an empty schema of its own,
 *  because a scenario group keeps its instance while later setups start new ones. Migrating is
 *  slow DDL, so a schema whose Postern closed is emptied and handed to the next setup.
 *  `listen: false` for a one-connection pool (a LISTEN client would hold the connection). */
export function contractStores(db: TestDatabase, opts: { listen?: boolean } = {}) {
  const schemas: string[] = [];
  const free: string[] = [];

  async function emptySchema(): Promise<string> {
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

  return {
    async stores(clock: Clock): Promise<Stores> {
      const schema = await emptySchema();
      const stores = postgresStores({ pool: db.pool, schema, clock, listen: opts.listen });
      return {
        ...stores,
        async close() {
          await stores.close?.();
          free.push(schema);
        },
      };
    },
    /** Drops every schema handed out (before `db.close()`). */
    async dropAll(): Promise<void> {
      for (const s of schemas) await db.pool.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
    },
  };
}
