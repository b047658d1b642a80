import type { Logger } from '@postern/core';
import type { PoolLike } from './db.js';

const positive = (v: unknown): number | null => (typeof v === 'number' && v > 0 ? v : null);
/** Pools already checked: several `postgresStores()` over one pool (schemas, tests) check once. */
const checked = new WeakSet<object>();

/** Warns once (`db_timeouts`) when the pool stops waiting for queries (`query_timeout`) while
 *  the server does not give up first (`statement_timeout` unset, or not below it). pg's
 *  `query_timeout` only stops the client waiting: the statement runs on and commits once the
 *  lock it waited for is free (a refresh answered 503 still rotates the token, and the client's
 *  retry is taken for reuse), and the dropped client's server connection stays busy while the
 *  pool opens another. The server's own setting counts too (set on the role or database), so
 *  without the pool option it is read once through the pool; a failed read says nothing. */
export function checkStatementTimeout(pool: PoolLike, logger: Logger): void {
  if (checked.has(pool)) return;
  checked.add(pool);
  const options = (pool as { options?: Record<string, unknown> }).options;
  const queryMs = positive(options?.query_timeout);
  if (queryMs === null) return;
  const warn = (statementMs: number | null) => {
    if (statementMs !== null && statementMs < queryMs) return;
    logger.warn(
      { event: 'db_timeouts', queryTimeoutMs: queryMs, statementTimeoutMs: statementMs },
      'the pool has query_timeout but no statement_timeout below it: a statement the app stopped waiting for runs on, and may commit after its request failed (docs/postgres.md, Failures)',
    );
  };
  const fromOptions = positive(options?.statement_timeout);
  if (fromOptions !== null) {
    warn(fromOptions);
    return;
  }
  pool
    .query(`SELECT setting::bigint AS ms FROM pg_settings WHERE name = 'statement_timeout'`)
    .then((r) => warn(positive(Number(r.rows[0]?.ms))))
    .catch(() => {});
}
