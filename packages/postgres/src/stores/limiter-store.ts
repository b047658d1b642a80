import type { LimiterRecord, LimiterStore } from '@postern/core/ports';
import type { StoreDeps } from '../deps.js';
import { backgroundSweep } from '../sweeper.js';

/** Ended windows are deleted every this many consumes, in the background. */
const SWEEP_EVERY = 1024;

/** Fixed windows in one upsert: the row lock of `ON CONFLICT DO UPDATE` serialises concurrent
 *  hits on one key, and the window restarts in the same statement when it has ended. The
 *  several-key statements take their rows in key order, so two of them never deadlock. */
export function postgresLimiterStore({ db, t, logger, inTransaction }: StoreDeps): LimiterStore {
  const T = t('limiter');
  const CONSUME = t('limiter_consume_in_order');
  const out = (r: { points: number; reset_at: Date }): LimiterRecord => ({
    points: r.points,
    resetAt: r.reset_at,
  });

  const sweepSometimes = backgroundSweep({
    every: SWEEP_EVERY,
    inTransaction,
    logger,
    event: 'limiter_sweep_failed',
    run: (now) => db.query(`DELETE FROM ${T} WHERE reset_at <= $1`, [now]),
  });
  // Rows are locked in one order everywhere: byte order of the keys' UTF-8, here and in SQL
  // (`COLLATE "C"`), whatever the database's collation, or two calls could deadlock.
  const byKey = <E extends { key: string }>(entries: readonly E[]) =>
    [...entries].sort((a, b) => Buffer.compare(Buffer.from(a.key), Buffer.from(b.key)));

  return {
    async consume(key, points, durationMs, now) {
      if (points < 0) {
        // A refund lowers a live window only; it never starts one.
        const back = await db.query(
          `UPDATE ${T} SET points = GREATEST(points + $2, 0) WHERE key = $1 AND reset_at > $3
           RETURNING points, reset_at`,
          [key, points, now],
        );
        return back.rows[0] ? out(back.rows[0]) : { points: 0, resetAt: now };
      }
      const r = await db.query(
        `INSERT INTO ${T} AS l (key, points, reset_at) VALUES ($1, $2, $3)
         ON CONFLICT (key) DO UPDATE SET
           points = CASE WHEN l.reset_at <= $4 THEN EXCLUDED.points ELSE l.points + EXCLUDED.points END,
           reset_at = CASE WHEN l.reset_at <= $4 THEN EXCLUDED.reset_at ELSE l.reset_at END
         RETURNING points, reset_at`,
        [key, points, new Date(now.getTime() + durationMs), now],
      );
      sweepSometimes(now);
      return out(r.rows[0]);
    },
    async consumeMany(entries, now) {
      if (entries.length === 0) return [];
      // One statement: the function (migration 0017) locks the keys' rows in key order, reads
      // their latest counters and counts either every key or only the first one, in entry
      // order, that would go over its limit, inside one transaction.
      const sorted = byKey(entries.map((e, n) => ({ ...e, n })));
      const r = await db.query(
        `SELECT counted_key, counted_points, counted_reset_at FROM ${CONSUME}($1, $2, $3, $4, $5, $6)`,
        [
          sorted.map((e) => e.key),
          sorted.map((e) => e.points),
          sorted.map((e) => new Date(now.getTime() + e.durationMs)),
          sorted.map((e) => e.limit),
          sorted.map((e) => e.n),
          now,
        ],
      );
      sweepSometimes(now);
      const got = new Map(
        (r.rows as Array<{ counted_key: string; counted_points: number; counted_reset_at: Date }>).map(
          (x) => [x.counted_key, out({ points: x.counted_points, reset_at: x.counted_reset_at })],
        ),
      );
      return entries.map((e) => got.get(e.key) ?? null);
    },
    async settle(refund, clear, now) {
      if (refund.length === 0 && clear.length === 0) return [];
      // One UPDATE: a cleared key's window ends now, which every read and the next consume
      // treat as absent (the sweep deletes it), as a DELETE would. The rows are locked first,
      // in key order, and their values then are what a cleared key held.
      const all = byKey([
        ...refund.map((r) => ({ key: r.key, back: r.points, clear: false })),
        ...clear.map((key) => ({ key, back: 0, clear: true })),
      ]);
      const r = await db.query(
        `WITH e AS (
           SELECT * FROM unnest($1::text[], $2::int[], $3::bool[]) AS e(key, back, clear)
         ), held AS (
           SELECT key, points, reset_at FROM ${T} WHERE key = ANY($1::text[]) ORDER BY key COLLATE "C" FOR UPDATE
         )
         UPDATE ${T} AS l SET
           points = CASE WHEN e.clear THEN 0 ELSE GREATEST(l.points - e.back, 0) END,
           reset_at = CASE WHEN e.clear THEN LEAST(l.reset_at, $4) ELSE l.reset_at END
         FROM held JOIN e ON e.key = held.key
         WHERE l.key = held.key AND (e.clear OR l.reset_at > $4)
         RETURNING l.key, held.points, held.reset_at`,
        [all.map((e) => e.key), all.map((e) => e.back), all.map((e) => e.clear), now],
      );
      const held = new Map(
        (r.rows as Array<{ key: string; points: number; reset_at: Date }>).map((x) => [x.key, x]),
      );
      return clear.map((key) => {
        const h = held.get(key);
        return h && h.reset_at > now ? out(h) : null;
      });
    },
    async get(key, now) {
      const r = await db.query(`SELECT points, reset_at FROM ${T} WHERE key = $1 AND reset_at > $2`, [
        key,
        now,
      ]);
      return r.rows[0] ? out(r.rows[0]) : null;
    },
    async delete(key) {
      await db.query(`DELETE FROM ${T} WHERE key = $1`, [key]);
    },
  };
}
