import type { LimiterRecord, LimiterStore } from '@postern/core';
import type { StoreDeps } from '../deps.js';

/** Ended windows are deleted every this many consumes. */
const SWEEP_EVERY = 1024;

/** Fixed windows in one upsert: the row lock of `ON CONFLICT DO UPDATE` serialises concurrent
 *  hits on one key, and the window restarts in the same statement when it has ended. */
export function postgresLimiterStore({ db, t, logger }: StoreDeps): LimiterStore {
  const T = t('limiter');
  let writes = 0;
  const out = (r: { points: number; reset_at: Date }): LimiterRecord => ({
    points: r.points,
    resetAt: r.reset_at,
  });

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
      if (++writes % SWEEP_EVERY === 0) {
        await db.query(`DELETE FROM ${T} WHERE reset_at <= $1`, [now]).catch((err: unknown) => {
          logger.warn({ event: 'limiter_sweep_failed', err: String(err) }, 'limiter sweep failed');
        });
      }
      return out(r.rows[0]);
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
