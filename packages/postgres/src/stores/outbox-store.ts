import { randomUUID } from 'node:crypto';
import {
  type OutboxEvent,
  type OutboxLease,
  type OutboxStats,
  type OutboxStore,
  StoreError,
} from '@postern/core/ports';
import { createBatcher } from '../batcher.js';
import { affected } from '../db.js';
import type { StoreDeps } from '../deps.js';
import { PRESENCE_CLASS, presenceGone } from '../wake.js';

interface OutboxRow {
  id: string;
  seq: string;
  name: string;
  payload: string;
  dedupe_key: string | null;
  status: OutboxEvent['status'];
  attempts: number;
  available_at: Date;
  locked_by: string | null;
  locked_until: Date | null;
  last_error: string | null;
  outcome: string | null;
  created_at: Date;
  finished_at: Date | null;
}

const toEvent = (r: OutboxRow): OutboxEvent => ({
  id: r.id,
  name: r.name,
  payload: r.payload,
  dedupeKey: r.dedupe_key,
  status: r.status,
  attempts: r.attempts,
  availableAt: r.available_at,
  lockedBy: r.locked_by,
  lockedUntil: r.locked_until,
  lastError: r.last_error,
  outcome: r.outcome,
  createdAt: r.created_at,
  finishedAt: r.finished_at,
});

/** Dead workers' leases are looked for at most this often per process. */
const REAP_EVERY_MS = 1000;

/** The outbox on one table. Claims use `FOR UPDATE SKIP LOCKED` plus a lease column: the row
 *  lock keeps two claimers apart for the instant of the claim, the lease (`locked_until`) keeps
 *  the event out of other claims while a worker delivers it, and lets it be re-claimed when that
 *  worker dies: after the visibility timeout, or at once when the claim carried the presence
 *  key of a process whose presence lock is gone (wake.ts). Every finishing write is fenced by
 *  (locked_by, attempts). */
export function postgresOutboxStore({
  db,
  t,
  wake,
  ping,
  afterCommit,
  logger,
  inTransaction,
}: StoreDeps): OutboxStore {
  const wakeWorkers = () => afterCommit(() => ping.ping());
  const T = t('outbox_events');
  // A lease matches while the event is pending and still carries this claim.
  const FENCE = `id = $1 AND status = 'pending' AND locked_by = $2 AND attempts = $3`;
  const CLEAR = 'locked_by = NULL, locked_until = NULL, locked_owner = NULL';
  // Claims and completions are soft state: if a server crash loses one, the event is simply
  // delivered again, which at-least-once delivery and idempotent consumers absorb. So they
  // commit without waiting for the WAL flush (`synchronous_commit = off` for that transaction
  // only). Publishing stays fully durable: a webhook is acknowledged only once its event is on
  // disk. Inside a caller's transaction nothing is relaxed.
  const SOFT_FROM = inTransaction ? '' : `, (SELECT set_config('synchronous_commit', 'off', true)) AS soft`;
  let lastReap = 0;

  /** Ends the leases of processes that died holding them (their presence lock is gone). */
  const reap = async (now: Date) => {
    if (Date.now() - lastReap < REAP_EVERY_MS) return;
    lastReap = Date.now();
    try {
      const r = await db.query(
        `UPDATE ${T} SET locked_until = LEAST(locked_until, $1), locked_owner = NULL
         WHERE status = 'pending' AND locked_owner IS NOT NULL AND ${presenceGone('locked_owner', '$2')}`,
        [now, PRESENCE_CLASS],
      );
      if (affected(r) > 0) {
        logger.warn(
          { event: 'outbox_leases_reaped', count: affected(r) },
          'released leases of a dead worker',
        );
      }
    } catch (err) {
      logger.warn({ event: 'outbox_reap_failed', err: String(err) }, 'looking for dead workers failed');
    }
  };

  /** On the pool (not inside a transaction), completions are group-committed: one UPDATE for
   *  every completion that arrives while earlier ones are in flight, each fenced as usual. */
  const batched = inTransaction
    ? null
    : createBatcher<{ id: string; lease: OutboxLease; outcome: string | null; now: Date }, boolean>(
        async (items) => {
          const r = await db.query(
            `UPDATE ${T} e SET status = 'done', outcome = v.outcome, finished_at = v.now,
               locked_by = NULL, locked_until = NULL, locked_owner = NULL
             FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::timestamptz[])
               AS v(id, worker, attempt, outcome, now)${SOFT_FROM}
             WHERE e.id = v.id AND e.status = 'pending' AND e.locked_by = v.worker AND e.attempts = v.attempt
             RETURNING e.id, e.attempts`,
            [
              items.map((i) => i.id),
              items.map((i) => i.lease.workerId),
              items.map((i) => i.lease.attempt),
              items.map((i) => i.outcome),
              items.map((i) => i.now),
            ],
          );
          const done = new Set(
            (r.rows as Array<{ id: string; attempts: number }>).map((x) => `${x.id}:${x.attempts}`),
          );
          return items.map((i) => done.has(`${i.id}:${i.lease.attempt}`));
        },
        { slots: 2, max: 500 },
      );

  /** Runs a fenced finishing write and tells the presence hub the lease is settled. */
  const finish = async (id: string, lease: OutboxLease, sql: string, extra: unknown[]) => {
    try {
      return affected(await db.query(sql, [id, lease.workerId, lease.attempt, ...extra])) === 1;
    } finally {
      wake?.settled(`${id}:${lease.attempt}`);
    }
  };

  const store: OutboxStore = {
    async publish(event, now) {
      const id = randomUUID();
      if (event.dedupeKey === undefined) {
        await db.query(
          `INSERT INTO ${T} (id, name, payload, available_at, created_at) VALUES ($1, $2, $3, $4, $4)`,
          [id, event.name, event.payload, now],
        );
        wakeWorkers();
        return { id, created: true };
      }
      // The common case is new: a plain insert, the same statement a bare route would run. A
      // duplicate inserts nothing (ON CONFLICT waits for a concurrent publisher of the same key
      // to commit or roll back), and the next statement reads the winner's id. A winner that
      // rolled back leaves nothing to read: insert again.
      for (let attempt = 0; attempt < 5; attempt++) {
        const ins = await db.query(
          `INSERT INTO ${T} (id, name, payload, dedupe_key, available_at, created_at)
           VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT (dedupe_key) DO NOTHING RETURNING id`,
          [id, event.name, event.payload, event.dedupeKey, now],
        );
        if (ins.rows.length > 0) {
          wakeWorkers();
          return { id, created: true };
        }
        const dup = await db.query(`SELECT id FROM ${T} WHERE dedupe_key = $1`, [event.dedupeKey]);
        const row = dup.rows[0] as { id: string } | undefined;
        if (row) return { id: row.id, created: false };
      }
      throw new StoreError('outbox publish kept conflicting');
    },

    async claim({ names, limit, now, leaseMs, workerId }) {
      if (limit <= 0 || names.length === 0) return [];
      await reap(now);
      const owner = wake?.presenceKey() ?? null;
      const r = await db.query(
        `WITH due AS (
           SELECT id FROM ${T}
           WHERE status = 'pending' AND name = ANY($1::text[]) AND available_at <= $2
             AND (locked_until IS NULL OR locked_until <= $2)
           ORDER BY available_at, seq
           LIMIT $3
           FOR UPDATE SKIP LOCKED
         )
         UPDATE ${T} e SET attempts = e.attempts + 1, locked_by = $4, locked_until = $5, locked_owner = $6
         FROM due${SOFT_FROM} WHERE e.id = due.id
         RETURNING e.*`,
        [names, now, limit, workerId, new Date(now.getTime() + leaseMs), owner],
      );
      const rows = r.rows as OutboxRow[];
      if (owner !== null) for (const row of rows) wake?.held(`${row.id}:${row.attempts}`);
      rows.sort(
        (a, b) => a.available_at.getTime() - b.available_at.getTime() || Number(a.seq) - Number(b.seq),
      );
      return rows.map(toEvent);
    },

    complete: (id, lease, outcome, now) =>
      batched
        ? batched({ id, lease, outcome, now }).finally(() => wake?.settled(`${id}:${lease.attempt}`))
        : finish(
            id,
            lease,
            `UPDATE ${T} SET status = 'done', outcome = $4, finished_at = $5, ${CLEAR} WHERE ${FENCE}`,
            [outcome, now],
          ),

    retry: (id, lease, error, availableAt) =>
      finish(id, lease, `UPDATE ${T} SET last_error = $4, available_at = $5, ${CLEAR} WHERE ${FENCE}`, [
        error,
        availableAt,
      ]),

    kill: (id, lease, error, now) =>
      finish(
        id,
        lease,
        `UPDATE ${T} SET status = 'dead', last_error = $4, finished_at = $5, ${CLEAR} WHERE ${FENCE}`,
        [error, now],
      ),

    async get(id) {
      const r = await db.query(`SELECT * FROM ${T} WHERE id = $1`, [id]);
      return r.rows[0] ? toEvent(r.rows[0]) : null;
    },

    async listDead({ limit, offset = 0 }) {
      const r = await db.query(
        `SELECT * FROM ${T} WHERE status = 'dead' ORDER BY finished_at DESC, seq DESC LIMIT $1 OFFSET $2`,
        [limit, offset],
      );
      return r.rows.map(toEvent);
    },

    async replay(id, now) {
      const r = await db.query(
        `UPDATE ${T} SET status = 'pending', attempts = 0, available_at = $2, finished_at = NULL, ${CLEAR}
         WHERE id = $1 AND status = 'dead'`,
        [id, now],
      );
      if (affected(r) !== 1) return false;
      wakeWorkers();
      return true;
    },

    async stats() {
      const r = await db.query(`SELECT status, count(*)::int AS n FROM ${T} GROUP BY status`);
      const s: OutboxStats = { pending: 0, done: 0, dead: 0 };
      for (const row of r.rows as Array<{ status: keyof OutboxStats; n: number }>) s[row.status] = row.n;
      return s;
    },

    async purge(before, limit) {
      // Oldest first by the partial index on done events; `LIMIT NULL` is no limit.
      const r = await db.query(
        `DELETE FROM ${T} WHERE id IN (
           SELECT id FROM ${T} WHERE status = 'done' AND finished_at < $1
           ORDER BY finished_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
        [before, limit ?? null],
      );
      return affected(r);
    },
  };
  if (wake) store.subscribeWake = (listener) => wake.subscribe(listener);
  return store;
}
