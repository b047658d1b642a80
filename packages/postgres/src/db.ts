import { StoreError } from '@postern/core';

/** The part of a `pg` query result the stores read. */
export interface QueryResultLike<R> {
  rows: R[];
  rowCount: number | null;
}

/** Anything that runs one query: a `pg.Pool`, a `pg.PoolClient` inside a transaction, or a wrapper.
 *  Structural, so hosts need neither `@types/pg` nor one particular copy of `pg`. */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<QueryResultLike<any>>;
}

export interface PoolClientLike extends Queryable {
  release(err?: Error | boolean): void;
  on?(event: 'error', listener: (err: Error) => void): unknown;
  removeListener?(event: 'error', listener: (err: Error) => void): unknown;
}

/** A checked-out client whose connection dies emits 'error'; unheard, that event crashes the
 *  process. Listen while the client is ours; the returned function stops listening and tells
 *  whether the connection broke (so it is released as broken, not back into the pool). */
export function watchClient(client: PoolClientLike): () => Error | undefined {
  let failure: Error | undefined;
  const onError = (err: Error) => {
    failure = err;
  };
  client.on?.('error', onError);
  return () => {
    client.removeListener?.('error', onError);
    return failure;
  };
}

/** A `pg.Pool` (or anything shaped like one). */
export interface PoolLike extends Queryable {
  connect(): Promise<PoolClientLike>;
  on?(event: 'error', listener: (err: Error, client?: unknown) => void): unknown;
}

/** SQLSTATE classes that mean "the database is unavailable right now, try again":
 *  08 connection exception, 53 insufficient resources, 57 operator intervention (restart,
 *  shutdown, cancel), 58 system error, 40 transaction rollback (serialization, deadlock),
 *  55P03 lock not available, 55000 object not in prerequisite state (e.g. a database not
 *  accepting connections during maintenance). Anything else with a SQLSTATE is a bug and stays as it is. */
const TRANSIENT_CLASSES = new Set(['08', '40', '53', '57', '58']);

export function isUnavailable(e: unknown): boolean {
  if (typeof e !== 'object' || e === null) return false;
  const err = e as { code?: unknown; severity?: unknown };
  const code = typeof err.code === 'string' ? err.code : undefined;
  // A server-side error carries `severity` and a five-character SQLSTATE.
  if (typeof err.severity === 'string' && code?.length === 5) {
    return TRANSIENT_CLASSES.has(code.slice(0, 2)) || code === '55P03' || code === '55000';
  }
  // Everything else thrown by the driver is about the connection: socket errors
  // (ECONNREFUSED, ECONNRESET, ETIMEDOUT...), "Connection terminated", pool connect timeouts,
  // "Client has encountered a connection error", AggregateError of refused addresses.
  if (code !== undefined && /^E[A-Z]+$/.test(code)) return true;
  if (e instanceof AggregateError) return true;
  const message = e instanceof Error ? e.message : '';
  return /connection|connect|terminat|timeout|not queryable|pool after calling end/i.test(message);
}

/** Maps driver failures that mean "database unavailable" to StoreError (503 + Retry-After). A
 *  missing table (42P01) says what to do about it: the schema was never migrated. */
export function mapError(e: unknown): unknown {
  if (isUnavailable(e)) return new StoreError('database unavailable', { cause: e });
  if ((e as { code?: unknown } | null)?.code === '42P01')
    return new Error(
      `${(e as Error).message}: has migrate(pool, { schema }) (or \`postern-postgres migrate --schema <name>\`) run for this schema?`,
      { cause: e },
    );
  return e;
}

/** Postgres text cannot hold U+0000 (a query carrying it fails). Strangers' input can: a path
 *  segment, a subject in a webhook payload. It becomes U+FFFD, so a lookup simply finds nothing
 *  and stored text keeps its shape. */
function withoutNul(values: unknown[] | undefined): unknown[] | undefined {
  if (!values) return values;
  let out: unknown[] | undefined;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    let clean = v;
    if (typeof v === 'string') {
      if (v.includes('\0')) clean = v.replaceAll('\0', '\uFFFD');
    } else if (Array.isArray(v) && v.some((x) => typeof x === 'string' && x.includes('\0'))) {
      clean = v.map((x) => (typeof x === 'string' ? x.replaceAll('\0', '\uFFFD') : x));
    }
    if (clean !== v) {
      out ??= [...values];
      out[i] = clean;
    }
  }
  return out ?? values;
}

/** Wraps a Queryable so every failure that means "unavailable" surfaces as StoreError, and
 *  no parameter carries a NUL character. */
export function guarded(db: Queryable): Queryable {
  return {
    async query(text, values) {
      try {
        return await db.query(text, withoutNul(values));
      } catch (e) {
        throw mapError(e);
      }
    },
  };
}

/** Runs `fn` on one pooled client inside BEGIN/COMMIT; ROLLBACK on any throw. A client whose
 *  connection broke is released as broken so the pool does not hand it out again. */
export async function withTransaction<T>(pool: PoolLike, fn: (client: Queryable) => Promise<T>): Promise<T> {
  let client: PoolClientLike;
  try {
    client = await pool.connect();
  } catch (e) {
    throw mapError(e);
  }
  const unwatch = watchClient(client);
  const db = guarded(client);
  let broken: Error | undefined;
  try {
    await db.query('BEGIN');
    const result = await fn(db);
    await db.query('COMMIT');
    return result;
  } catch (e) {
    try {
      await client.query('ROLLBACK');
    } catch (rollbackError) {
      broken = rollbackError instanceof Error ? rollbackError : new Error('rollback failed');
    }
    // Errors of `db` are already mapped; anything else came from `fn` and stays as it is.
    throw e;
  } finally {
    const failure = unwatch();
    client.release(broken ?? failure);
  }
}

/** Rows affected, 0 when the driver reports none. */
export function affected(result: QueryResultLike<unknown>): number {
  return result.rowCount ?? 0;
}
