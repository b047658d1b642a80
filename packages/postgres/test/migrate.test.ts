import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { recordingLogger } from '@postern/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, readMigrations } from '../src/migrate.js';
import {
  NO_SERVER_REASON,
  openTestDatabase,
  schemaName,
  serverUrl,
  type TestDatabase,
} from './helpers/test-db.js';

let db: TestDatabase;
const schemas: string[] = [];
const fresh = (label: string) => {
  const s = schemaName(label);
  schemas.push(s);
  return s;
};

async function tempMigrations(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ph-migrations-'));
  for (const [name, sql] of Object.entries(files)) await writeFile(join(dir, name), sql);
  return dir;
}

async function tableNames(schema: string): Promise<string[]> {
  const r = await db.pool.query('SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename', [
    schema,
  ]);
  return r.rows.map((x: { tablename: string }) => x.tablename);
}

beforeAll(async () => {
  db = await openTestDatabase('migrate', { migrate: false });
});

afterAll(async () => {
  for (const s of schemas) await db.pool.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
  await db?.close();
});

describe('migrate', () => {
  it('applies every shipped migration to a new schema, and nothing on the second run', async () => {
    const schema = fresh('shipped');
    const files = await readMigrations();
    const first = await migrate(db.pool, { schema });
    expect(first.applied).toEqual(files.map((f) => f.name));
    const second = await migrate(db.pool, { schema });
    expect(second.applied).toEqual([]);
    const recorded = await db.pool.query(
      `SELECT version FROM "${schema}".postern_migrations ORDER BY version`,
    );
    expect(recorded.rows.map((r: { version: number }) => r.version)).toEqual(files.map((f) => f.version));
  });

  it('applies only the files added since the last run, in numeric order', async () => {
    const schema = fresh('incremental');
    const dir = await tempMigrations({ '0001_a.sql': 'CREATE TABLE a (id int);' });
    expect((await migrate(db.pool, { schema, dir })).applied).toEqual(['0001_a.sql']);
    await writeFile(join(dir, '0003_c.sql'), 'CREATE TABLE c (id int REFERENCES b(id));');
    await writeFile(
      join(dir, '0002_b.sql'),
      'CREATE TABLE b (id int PRIMARY KEY); INSERT INTO b VALUES (1);',
    );
    expect((await migrate(db.pool, { schema, dir })).applied).toEqual(['0002_b.sql', '0003_c.sql']);
    expect(await tableNames(schema)).toEqual(['a', 'b', 'c', 'postern_migrations']);
  });

  it("0013 marks members stored before it as added by each account's first member, so they wait for a proven address", async () => {
    const schema = fresh('added_by');
    const shipped = await readMigrations();
    const before = Object.fromEntries(shipped.filter((f) => f.version < 13).map((f) => [f.name, f.sql]));
    const dir = await tempMigrations(before);
    await migrate(db.pool, { schema, dir });
    const q = (sql: string, params: unknown[] = []) =>
      db.pool.query(sql.replaceAll('S.', `"${schema}".`), params);
    await q(
      `INSERT INTO S.inbox_accounts (id, address, name, created_at) VALUES ('a1', 'a@x.test', 'A', now()), ('a2', 'b@x.test', 'B', now())`,
    );
    for (const [account, user, role] of [
      ['a1', 'creator1', 'owner'],
      ['a2', 'creator2', 'owner'],
      ['a1', 'added1', 'owner'],
      ['a1', 'added2', 'member'],
    ])
      await q(
        `INSERT INTO S.inbox_members (account_id, user_id, role, created_at) VALUES ($1, $2, $3, now())`,
        [account, user, role],
      );
    const m13 = shipped.find((f) => f.version === 13)!;
    await writeFile(join(dir, m13.name), m13.sql);
    expect((await migrate(db.pool, { schema, dir })).applied).toEqual([m13.name]);
    const rows = await q(`SELECT user_id, added_by FROM S.inbox_members ORDER BY seq`);
    expect(rows.rows).toEqual([
      { user_id: 'creator1', added_by: null },
      { user_id: 'creator2', added_by: null },
      { user_id: 'added1', added_by: 'creator1' },
      { user_id: 'added2', added_by: 'creator1' },
    ]);
    // A member written by an older release during a rolling deploy never counts as a creator.
    await q(
      `INSERT INTO S.inbox_members (account_id, user_id, role, created_at) VALUES ('a2', 'old', 'member', now())`,
    );
    expect((await q(`SELECT added_by FROM S.inbox_members WHERE user_id = 'old'`)).rows).toEqual([
      { added_by: '' },
    ]);
  });

  it('keeps two schemas in one database apart', async () => {
    const one = fresh('app_one');
    const two = fresh('app_two');
    const dir = await tempMigrations({ '0001_a.sql': 'CREATE TABLE a (id int); INSERT INTO a VALUES (1);' });
    await migrate(db.pool, { schema: one, dir });
    await migrate(db.pool, { schema: two, dir });
    await db.pool.query(`INSERT INTO "${one}".a VALUES (2)`);
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM "${one}".a`)).rows[0].n).toBe(2);
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM "${two}".a`)).rows[0].n).toBe(1);
  });

  it('rolls a failing file back whole and records nothing for it', async () => {
    const schema = fresh('failing');
    const dir = await tempMigrations({
      '0001_ok.sql': 'CREATE TABLE ok (id int);',
      '0002_bad.sql': 'CREATE TABLE half (id int); SELECT no_such_function();',
      '0003_later.sql': 'CREATE TABLE later (id int);',
    });
    await expect(migrate(db.pool, { schema, dir })).rejects.toThrow(/no_such_function/);
    expect(await tableNames(schema)).toEqual(['ok', 'postern_migrations']);
    // The lock was released: a fixed file applies on the next run.
    await writeFile(join(dir, '0002_bad.sql'), 'CREATE TABLE half (id int);');
    expect((await migrate(db.pool, { schema, dir })).applied).toEqual(['0002_bad.sql', '0003_later.sql']);
  });

  it('reports an applied file that changed and does not run it again', async () => {
    const schema = fresh('changed');
    const dir = await tempMigrations({ '0001_a.sql': 'CREATE TABLE a (id int);' });
    await migrate(db.pool, { schema, dir });
    await writeFile(join(dir, '0001_a.sql'), 'CREATE TABLE a (id int, extra int);');
    const { warnings, logger } = recordingLogger();
    expect((await migrate(db.pool, { schema, dir, logger })).applied).toEqual([]);
    expect(warnings()).toEqual([
      expect.objectContaining({ event: 'migration_changed', migration: '0001_a.sql' }),
    ]);
  });

  it('warns about migrations of a newer release it does not know, and goes on', async () => {
    const schema = fresh('newer');
    const newer = await tempMigrations({
      '0001_a.sql': 'CREATE TABLE a (id int);',
      '0002_b.sql': 'SELECT 1;',
    });
    await migrate(db.pool, { schema, dir: newer });
    const older = await tempMigrations({ '0001_a.sql': 'CREATE TABLE a (id int);' });
    const { warnings, logger } = recordingLogger();
    expect((await migrate(db.pool, { schema, dir: older, logger })).applied).toEqual([]);
    expect(warnings()).toEqual([
      expect.objectContaining({ event: 'migration_unknown', schema, migrations: ['0002_b.sql'] }),
    ]);
  });

  it('refuses a schema name that is not a plain identifier', async () => {
    await expect(migrate(db.pool, { schema: 'x"; DROP TABLE y; --' })).rejects.toThrow(/schema must match/);
    await expect(migrate(db.pool, { schema: 'Upper' })).rejects.toThrow(/schema must match/);
  });

  it('lets several migrators race on one schema: each file is applied exactly once', async () => {
    const schema = fresh('race');
    // The INSERT would fail on the primary key if a file ran twice.
    const dir = await tempMigrations({
      '0001_a.sql': 'CREATE TABLE a (id int PRIMARY KEY); INSERT INTO a VALUES (1);',
      '0002_b.sql': 'SELECT pg_sleep(0.05); INSERT INTO a VALUES (2);',
    });
    const results = await Promise.all(Array.from({ length: 5 }, () => migrate(db.pool, { schema, dir })));
    expect(results.flatMap((r) => r.applied).sort()).toEqual(['0001_a.sql', '0002_b.sql']);
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM "${schema}".a`)).rows[0].n).toBe(2);
  });
});

const url = await serverUrl();
const cli = fileURLToPath(new URL('../src/cli.ts', import.meta.url));
const pkgDir = fileURLToPath(new URL('..', import.meta.url));
const run = (cmd: string, args: string[], opts: { env: NodeJS.ProcessEnv }) =>
  promisify(execFile)(cmd, args, { ...opts, cwd: pkgDir });

describe('postern-postgres migrate (CLI)', () => {
  it.skipIf(!url)(
    `migrates the schema named by --schema using DATABASE_URL${url ? '' : ` (skipped: ${NO_SERVER_REASON})`}`,
    async () => {
      const schema = fresh('cli');
      const env = { ...process.env, DATABASE_URL: url! };
      const first = await run(process.execPath, ['--import', 'tsx', cli, 'migrate', '--schema', schema], {
        env,
      });
      expect(first.stdout).toMatch(new RegExp(`schema "${schema}": applied 0001_`));
      const second = await run(process.execPath, ['--import', 'tsx', cli, 'migrate', '--schema', schema], {
        env,
      });
      expect(second.stdout).toBe(`schema "${schema}" is up to date\n`);
      const check = new pg.Client({ connectionString: url! });
      await check.connect();
      const n = await check.query('SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = $1', [schema]);
      await check.end();
      expect(n.rows[0].n).toBeGreaterThan(1);
    },
  );

  it('exits 1 and logs migration_failed as a JSON line (epoch-ms time) when the migration fails', async () => {
    const env = { ...process.env, DATABASE_URL: 'postgres://127.0.0.1:1/none' };
    const err = await run(
      process.execPath,
      ['--import', 'tsx', cli, 'migrate', '--schema', 'not a schema!'],
      {
        env,
      },
    ).catch((e: { code: number; stderr: string }) => e);
    expect(err).toMatchObject({ code: 1 });
    const lines = err.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.at(-1)).toMatchObject({
      event: 'migration_failed',
      level: 'error',
      time: expect.any(Number),
      msg: 'migration failed',
      err: expect.any(String),
    });
  });

  it('names what it could not reach when the database is down', async () => {
    const env = { ...process.env, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' };
    const err = await run(process.execPath, ['--import', 'tsx', cli, 'migrate'], { env }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(err).toMatchObject({ code: 1 });
    const last = JSON.parse(err.stderr.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(last).toMatchObject({ event: 'migration_failed', err: 'database unavailable' });
    expect(last.cause).toMatch(/ECONNREFUSED 127\.0\.0\.1:1\b/);
  });

  it('exits 2 with a message when DATABASE_URL is missing', async () => {
    const env = { ...process.env, DATABASE_URL: '' };
    const err = await run(process.execPath, ['--import', 'tsx', cli, 'migrate'], { env }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(err).toMatchObject({ code: 2, stderr: expect.stringMatching(/DATABASE_URL is not set/) });
  });
});
