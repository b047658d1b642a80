import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, type Logger, warningsLogger } from '@postern/core';
import { guarded, mapError, type PoolLike, type Queryable, watchClient } from './db.js';
import { checkSchema, DEFAULT_SCHEMA } from './schema.js';

export interface MigrateOptions {
  /** Schema holding every Postern table (created when missing). Default `postern`. */
  schema?: string;
  logger?: Logger;
  /** Where the numbered `.sql` files live. Default: the package's `migrations/` folder. */
  dir?: string;
}

export interface MigrateResult {
  schema: string;
  /** File names applied by this call, in order (empty when the schema was up to date). */
  applied: string[];
}

interface MigrationFile {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

const FILE = /^(\d{4})_[a-z0-9_]+\.sql$/;

/** The shipped migrations: `<package>/migrations`, one level above both `src/` and `dist/`. */
export function defaultMigrationsDir(): string {
  return fileURLToPath(new URL('../migrations/', import.meta.url));
}

export async function readMigrations(dir = defaultMigrationsDir()): Promise<MigrationFile[]> {
  const names = (await readdir(dir)).filter((n) => FILE.test(n)).sort();
  const files: MigrationFile[] = [];
  for (const name of names) {
    const sql = await readFile(join(dir, name), 'utf8');
    const version = Number(FILE.exec(name)![1]);
    if (files.some((f) => f.version === version)) throw new ConfigError(`two migrations numbered ${version}`);
    files.push({ version, name, sql, checksum: createHash('sha256').update(sql).digest('hex') });
  }
  return files;
}

/**
 * Brings `schema` up to the newest migration. Idempotent: applied files are recorded in
 * `<schema>.postern_migrations` and skipped. Safe to run from several processes at once:
 * a session advisory lock keyed by the schema name serialises them, and each file is applied
 * in its own transaction together with its record, so a crash leaves no half-applied file.
 */
export async function migrate(pool: PoolLike, opts: MigrateOptions = {}): Promise<MigrateResult> {
  const schema = checkSchema(opts.schema ?? DEFAULT_SCHEMA);
  const logger = opts.logger ?? warningsLogger;
  const files = await readMigrations(opts.dir);
  const lockKey = `postern.migrate:${schema}`;
  let client: Awaited<ReturnType<PoolLike['connect']>>;
  try {
    client = await pool.connect();
  } catch (e) {
    throw mapError(e);
  }
  const unwatch = watchClient(client);
  const db: Queryable = guarded(client);
  const applied: string[] = [];
  let broken: Error | undefined;
  try {
    await db.query('SELECT pg_advisory_lock(hashtext($1))', [lockKey]);
    try {
      await db.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      await db.query(
        `CREATE TABLE IF NOT EXISTS "${schema}".postern_migrations (
          version integer PRIMARY KEY,
          name text NOT NULL,
          checksum text NOT NULL,
          applied_at timestamptz NOT NULL DEFAULT now()
        )`,
      );
      const done = await db.query(`SELECT version, name, checksum FROM "${schema}".postern_migrations`);
      const known = new Map<number, { name: string; checksum: string }>(
        done.rows.map((r: { version: number; name: string; checksum: string }) => [r.version, r]),
      );
      // A newer release migrated this schema (a rolling deploy, a rollback). Flyway's default:
      // go on, since migrations are meant to stay compatible, but say so: if one is not, the
      // failures that follow have a named cause.
      const ours = new Set(files.map((f) => f.version));
      const unknown = [...known].filter(([version]) => !ours.has(version)).map(([, r]) => r.name);
      if (unknown.length > 0) {
        logger.warn(
          { event: 'migration_unknown', schema, migrations: unknown },
          'schema has migrations this release does not know (migrated by a newer one)',
        );
      }
      for (const file of files) {
        const prior = known.get(file.version);
        if (prior) {
          // Append-only: an applied file that changed is reported, never re-run.
          if (prior.checksum !== file.checksum) {
            logger.warn(
              { event: 'migration_changed', schema, migration: file.name },
              'applied migration file changed',
            );
          }
          continue;
        }
        await db.query('BEGIN');
        try {
          await db.query(`SET LOCAL search_path TO "${schema}"`);
          await db.query(file.sql);
          await db.query(
            `INSERT INTO "${schema}".postern_migrations (version, name, checksum) VALUES ($1, $2, $3)`,
            [file.version, file.name, file.checksum],
          );
          await db.query('COMMIT');
        } catch (e) {
          await db.query('ROLLBACK').catch(() => {});
          throw e;
        }
        applied.push(file.name);
        logger.info({ event: 'migration_applied', schema, migration: file.name }, 'migration applied');
      }
    } finally {
      await db.query('SELECT pg_advisory_unlock(hashtext($1))', [lockKey]).catch((e: Error) => {
        broken = e;
      });
    }
  } catch (e) {
    broken ??= e instanceof Error ? e : new Error('migration failed');
    throw e;
  } finally {
    const failure = unwatch();
    client.release(broken ?? failure);
  }
  return { schema, applied };
}
