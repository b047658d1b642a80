#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { jsonLinesLogger } from '@postern/core';
import { causeMessage, errorMessage } from '@postern/core/internal';
import { migrate } from './migrate.js';

const USAGE = `Usage: postern-postgres migrate [--schema <name>] [--database-url <url>]

Applies the numbered Postern migrations to one schema (created when missing).
  --schema         schema name (default: $DATABASE_SCHEMA or "postern")
  --database-url   connection string (default: $DATABASE_URL)
`;

/** Structured lines on stderr: the CLI's only output besides the summary. */
const logger = jsonLinesLogger((line) => process.stderr.write(`${line}\n`));

async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      schema: { type: 'string' },
      'database-url': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help || positionals[0] !== 'migrate' || positionals.length !== 1) {
    process.stdout.write(USAGE);
    return values.help ? 0 : 2;
  }
  const url = values['database-url'] ?? env.DATABASE_URL;
  if (!url) {
    process.stderr.write('DATABASE_URL is not set (or pass --database-url)\n');
    return 2;
  }
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 10_000 });
  try {
    const result = await migrate(pool, { schema: values.schema ?? env.DATABASE_SCHEMA, logger });
    process.stdout.write(
      result.applied.length === 0
        ? `schema "${result.schema}" is up to date\n`
        : `schema "${result.schema}": applied ${result.applied.join(', ')}\n`,
    );
    return 0;
  } catch (e) {
    logger.error(
      { event: 'migration_failed', err: errorMessage(e), cause: causeMessage(e) },
      'migration failed',
    );
    return 1;
  } finally {
    await pool.end();
  }
}

main(process.argv.slice(2), process.env).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`${errorMessage(e)}\n`);
    process.exitCode = 1;
  },
);
