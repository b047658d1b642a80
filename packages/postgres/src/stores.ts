import {
  type Clock,
  ConfigError,
  type Logger,
  type Stores,
  systemClock,
  warningsLogger,
} from '@postern/core';
import { guarded, type PoolLike, type Queryable, withTransaction } from './db.js';
import type { StoreDeps } from './deps.js';
import { checkSchema, DEFAULT_SCHEMA, qualifier } from './schema.js';
import { postgresEmailCodeStore } from './stores/email-code-store.js';
import { postgresInboxAccountStore } from './stores/inbox-account-store.js';
import { postgresInboxMessageStore } from './stores/inbox-message-store.js';
import {
  postgresInboxAttachmentStore,
  postgresInboxNotificationStore,
  postgresMailEventStore,
} from './stores/inbox-misc-stores.js';
import { postgresInboxThreadStore } from './stores/inbox-thread-store.js';
import { postgresLimiterStore } from './stores/limiter-store.js';
import { postgresMfaFactorStore } from './stores/mfa-factor-store.js';
import { postgresOutboxStore } from './stores/outbox-store.js';
import { postgresPendingLoginStore } from './stores/pending-login-store.js';
import { postgresRecoveryCodeStore } from './stores/recovery-code-store.js';
import { postgresResetCodeStore } from './stores/reset-code-store.js';
import { postgresSessionStore } from './stores/session-store.js';
import { postgresUserStore } from './stores/user-store.js';
import { postgresWebAuthnChallengeStore, postgresWebAuthnCredentialStore } from './stores/webauthn-stores.js';
import { checkStatementTimeout } from './timeouts.js';
import { createPinger, createWakeHub } from './wake.js';

export interface PostgresStoresOptions {
  /** A `pg.Pool` (or anything shaped like one). The host owns it: `close()` does not end it. */
  pool: PoolLike;
  /** Schema the migrations were applied to. Default `postern`. */
  schema?: string;
  /** Time source for expiry decisions (the same clock as the Postern instance). */
  clock?: Clock;
  logger?: Logger;
  /** Wake outbox workers with LISTEN/NOTIFY (holds one pooled connection while workers run).
   *  Default true; false = polling only (e.g. a single-connection pool). */
  listen?: boolean;
}

type PortStores = Omit<Stores, 'transaction' | 'close'>;

/** Builds every port on one Queryable. Called once for the pool and once per transaction,
 *  so a transaction rebinds all stores to its client. */
function portStores(deps: StoreDeps): PortStores {
  return {
    users: postgresUserStore(deps),
    sessions: postgresSessionStore(deps),
    resetCodes: postgresResetCodeStore(deps),
    limiter: postgresLimiterStore(deps),
    mfaFactors: postgresMfaFactorStore(deps),
    pendingLogins: postgresPendingLoginStore(deps),
    emailCodes: postgresEmailCodeStore(deps),
    recoveryCodes: postgresRecoveryCodeStore(deps),
    webauthnCredentials: postgresWebAuthnCredentialStore(deps),
    webauthnChallenges: postgresWebAuthnChallengeStore(deps),
    outbox: postgresOutboxStore(deps),
    inboxAccounts: postgresInboxAccountStore(deps),
    inboxThreads: postgresInboxThreadStore(deps),
    inboxMessages: postgresInboxMessageStore(deps),
    inboxAttachments: postgresInboxAttachmentStore(deps),
    mailEvents: postgresMailEventStore(deps),
    inboxNotifications: postgresInboxNotificationStore(deps),
  };
}

const POOL_ERROR_HANDLED = Symbol.for('postern.postgres.pool-error-handled');

/** Every option, checked complete against the type: a new option cannot be refused as unknown. */
const OPTION_KEYS = { pool: true, schema: true, clock: true, logger: true, listen: true } satisfies Record<
  keyof PostgresStoresOptions,
  true
>;

const isPool = (v: unknown): v is PoolLike =>
  typeof (v as PoolLike | null)?.query === 'function' && typeof (v as PoolLike).connect === 'function';

/** `postgresStores(pool, opts?)` or `postgresStores({ pool, ...opts })` (docs/postgres.md). */
function storesOptions(
  first: PoolLike | PostgresStoresOptions,
  rest: Omit<PostgresStoresOptions, 'pool'>,
): PostgresStoresOptions {
  const opts = isPool(first) ? { ...rest, pool: first } : (first as PostgresStoresOptions | null);
  if (!isPool(opts?.pool))
    throw new ConfigError(
      'postgresStores needs a pg.Pool: postgresStores(pool) or postgresStores({ pool, schema })',
    );
  // A misspelt `schema` would silently read and write the default schema's tables.
  const unknown = Object.keys(opts).filter((k) => !Object.hasOwn(OPTION_KEYS, k));
  if (unknown.length > 0) throw new ConfigError(`postgresStores: unknown option(s) ${unknown.join(', ')}`);
  return opts;
}

/**
 * Every Postern storage port on Postgres. Run `migrate(pool, { schema })` first (the
 * examples do it at start-up). Atomicity lives in SQL: single statements with
 * `... WHERE <still valid> RETURNING`, unique constraints for de-duplication, row locks where a
 * read decides a write, `FOR UPDATE SKIP LOCKED` for outbox claims.
 */
export function postgresStores(pool: PoolLike, opts?: Omit<PostgresStoresOptions, 'pool'>): Stores;
export function postgresStores(opts: PostgresStoresOptions): Stores;
export function postgresStores(
  first: PoolLike | PostgresStoresOptions,
  rest: Omit<PostgresStoresOptions, 'pool'> = {},
): Stores {
  const opts = storesOptions(first, rest);
  const { pool } = opts;
  const schema = checkSchema(opts.schema ?? DEFAULT_SCHEMA);
  const logger = opts.logger ?? warningsLogger;
  const wake = opts.listen === false ? undefined : createWakeHub(pool, schema, logger);
  const ping = createPinger(pool, schema, logger);
  checkStatementTimeout(pool, logger);
  const base = { t: qualifier(schema), clock: opts.clock ?? systemClock, logger, wake, ping };

  // An idle pooled client whose server went away emits 'error' on the pool; without a
  // listener that would crash the process (a database restart must not take the app down).
  const tagged = pool as PoolLike & { [POOL_ERROR_HANDLED]?: true };
  if (typeof pool.on === 'function' && !tagged[POOL_ERROR_HANDLED]) {
    tagged[POOL_ERROR_HANDLED] = true;
    pool.on('error', (err: Error) =>
      logger.warn({ event: 'db_idle_client_error', err: err.message }, 'idle client error'),
    );
  }

  const inTransaction = (client: Queryable, committed: Array<() => void>): Stores => {
    const tx: Stores = {
      ...portStores({
        ...base,
        db: client,
        atomic: (fn) => fn(client),
        inTransaction: true,
        afterCommit: (fn) => committed.push(fn),
      }),
      // Nested calls join the outer transaction.
      transaction: (fn) => fn(tx),
    };
    return tx;
  };

  return {
    ...portStores({
      ...base,
      db: guarded(pool),
      atomic: (fn) => withTransaction(pool, fn),
      inTransaction: false,
      afterCommit: (fn) => fn(),
    }),
    async transaction(fn) {
      const committed: Array<() => void> = [];
      const result = await withTransaction(pool, (client) => fn(inTransaction(client, committed)));
      for (const f of committed) f();
      return result;
    },
    async close() {
      wake?.close();
      ping.close();
    },
  };
}
