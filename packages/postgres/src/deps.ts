import type { Clock, Logger } from '@postern/core';
import type { Queryable } from './db.js';
import type { Pinger, WakeHub } from './wake.js';

/** What every store factory receives: where to send SQL, how to name tables, what time it is. */
export interface StoreDeps {
  /** The pool, or the client of the transaction the stores are bound to. */
  db: Queryable;
  /** Runs several statements as one unit: a transaction of its own on the pool, or simply
   *  inside the surrounding transaction when the stores are bound to one. */
  atomic<T>(fn: (db: Queryable) => Promise<T>): Promise<T>;
  /** True for stores bound to a transaction's client. */
  inTransaction: boolean;
  /** `"schema"."table"`. */
  t: (table: string) => string;
  clock: Clock;
  logger: Logger;
  /** Outbox wake-ups (LISTEN) and worker presence; absent when disabled. */
  wake?: WakeHub;
  /** Sends the debounced wake-up NOTIFY to workers in every process. */
  ping: Pinger;
  /** Runs `fn` once the writes made so far are committed: at once on the pool, after COMMIT
   *  inside a transaction (never when it rolls back). */
  afterCommit(fn: () => void): void;
}
