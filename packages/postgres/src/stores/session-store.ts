import { LONGEST_REUSE_WINDOW_SECONDS, type Session, type SessionStore } from '@postern/core/ports';
import { affected } from '../db.js';
import type { StoreDeps } from '../deps.js';
import { isUniqueViolation } from '../sql.js';
import { backgroundSweep } from '../sweeper.js';

interface SessionRow {
  id: string;
  user_id: string;
  created_at: Date;
  expires_at: Date;
  idle_expires_at: Date;
  last_used_at: Date;
  auth_time: Date;
  amr: string[];
  ip: string;
  user_agent: string | null;
  ended_at: Date | null;
  end_reason: string | null;
  refresh_cookie: boolean;
}

const toSession = (r: SessionRow): Session => ({
  id: r.id,
  userId: r.user_id,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  idleExpiresAt: r.idle_expires_at,
  lastUsedAt: r.last_used_at,
  authTime: r.auth_time,
  amr: r.amr,
  ip: r.ip,
  userAgent: r.user_agent,
  ...(r.refresh_cookie ? { cookie: true } : {}),
  endedAt: r.ended_at,
  endReason: r.end_reason,
});

const DAY_MS = 24 * 3600 * 1000;

const MAX_INT = 2 ** 31 - 1;

/** Session `s`'s rotation window has ended (or never began) at `now`: the next rotation starts
 *  one. Arguments are parameter references (`$3`). */
const windowOver = (now: string, windowSeconds: string) =>
  `(s.rotation_window_start IS NULL OR s.rotation_window_start <= ${now}::timestamptz - ${windowSeconds}::int * interval '1 second')`;

/** Session `s` is live at `now`. */
const live = (now: string) => `(s.ended_at IS NULL AND s.expires_at > ${now} AND s.idle_expires_at > ${now})`;

/** Token `r` (of table `rt`) is the just-rotated one, used within `grace` seconds of `now`
 *  (none of the tokens rotated out of it used since). */
const justRotated = (rt: string, now: string, grace: string) =>
  `(r.used_at IS NOT NULL AND ${grace}::int > 0 AND r.used_at >= ${now}::timestamptz - ${grace}::int * interval '1 second'
    AND NOT EXISTS (SELECT 1 FROM ${rt} o WHERE o.session_id = r.session_id AND o.parent = r.hash AND o.used_at IS NOT NULL))`;

/** Token `r` (in live session `s`) may rotate at `now`: unused, or, outside cookie sessions
 *  (which never fork), the just-rotated one within `grace` seconds. */
const rotatable = (rt: string, now: string, grace: string) =>
  `(${live(now)} AND (r.used_at IS NULL OR (NOT s.refresh_cookie AND ${justRotated(rt, now, grace)})))`;

/** A cookie session's repeat of its just-rotated token `r` within `grace` seconds: the salt of
 *  its successor (the family's newest token), else null. */
const cookieRepeatSalt = (rt: string, now: string, grace: string) =>
  `CASE WHEN s.refresh_cookie AND ${live(now)} AND ${justRotated(rt, now, grace)}
     THEN (SELECT c.salt FROM ${rt} c WHERE c.session_id = r.session_id AND c.parent = r.hash AND c.salt IS NOT NULL LIMIT 1)
   END`;

/** `pg_snapshot` text: `xmin:xmax:xip1,xip2,...` (at most a few thousand running transactions). */
const SNAPSHOT = /^(\d{1,20}):(\d{1,20}):((?:\d{1,20}(?:,\d{1,20})*)?)$/;

/** The xmax of a snapshot's text; null unless Postgres would take it (xmin <= xip < xmax), so a
 *  bad cursor starts the feed over instead of failing every poll. */
function xmaxOf(text: string): bigint | null {
  const m = SNAPSHOT.exec(text);
  if (!m) return null;
  const xmin = BigInt(m[1]!);
  const xmax = BigInt(m[2]!);
  const xip = m[3] ? m[3].split(',').map(BigInt) : [];
  return xmin <= xmax && xip.every((x) => x >= xmin && x < xmax) ? xmax : null;
}
/** Sessions (and their tokens) are deleted a day after they ended or passed their absolute end:
 *  every this many creates, in the background. */
const SWEEP_EVERY = 256;

/**
 * Sessions and refresh tokens. Rotation is one statement: the UPDATE that marks the presented
 * token used only matches while it is unused (row lock + re-check), so of concurrent callers
 * exactly one inserts the successor. Every end stamps `ended_xid = pg_current_xact_id()`, which
 * the ended-sid feed reads against the last read's snapshot so a slow commit is never skipped.
 */
export function postgresSessionStore({ db, t, logger, inTransaction }: StoreDeps): SessionStore {
  const S = t('sessions');
  const RT = t('refresh_tokens');
  const CREATE = t('create_session');
  const LIVE = `ended_at IS NULL AND expires_at > $2 AND idle_expires_at > $2`;
  const END = `ended_at = $2, end_reason = $3, ended_xid = pg_current_xact_id()`;

  const sweep = backgroundSweep({
    every: SWEEP_EVERY,
    inTransaction,
    logger,
    event: 'session_sweep_failed',
    run: async (now) => {
      await db.query(`DELETE FROM ${S} WHERE expires_at < $1 OR ended_at < $1`, [
        new Date(now.getTime() - DAY_MS),
      ]);
      // A newest token's salt serves repeats of the token before it, within its window only
      // (the partial index of migration 0018 holds just the salted rows).
      await db.query(
        `UPDATE ${RT} c SET salt = NULL FROM ${RT} p
         WHERE c.salt IS NOT NULL AND p.hash = c.parent AND p.used_at <= $1`,
        [new Date(now.getTime() - LONGEST_REUSE_WINDOW_SECONDS * 1000)],
      );
    },
  });

  return {
    async create(session, token, { maxPerUser }) {
      // One statement: the function (migration 0019) takes the per-user lock, so one user's
      // logins take turns and the cap holds under concurrent logins, then inserts and evicts.
      // A new session is live: it has no end time or reason to pass.
      const r = await db.query(
        `SELECT evicted_id, evicted_created_at, evicted_seq
         FROM ${CREATE}($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
        [
          `${S}:${session.userId}`,
          session.id,
          session.userId,
          session.createdAt,
          session.expiresAt,
          session.idleExpiresAt,
          session.lastUsedAt,
          session.authTime,
          session.amr,
          session.ip,
          session.userAgent,
          session.cookie === true,
          token ? token.hash : null,
          maxPerUser,
        ],
      );
      const evicted = (r.rows as Array<{ evicted_id: string; evicted_created_at: Date; evicted_seq: string }>)
        .sort(
          (a, b) =>
            a.evicted_created_at.getTime() - b.evicted_created_at.getTime() ||
            Number(a.evicted_seq) - Number(b.evicted_seq),
        )
        .map((x) => x.evicted_id);
      sweep(session.createdAt);
      return evicted;
    },

    async findById(id) {
      const r = await db.query(`SELECT * FROM ${S} WHERE id = $1`, [id]);
      return r.rows[0] ? toSession(r.rows[0]) : null;
    },

    async findByToken(hash) {
      const r = await db.query(
        `SELECT s.*, r.used_at AS token_used_at FROM ${RT} r JOIN ${S} s ON s.id = r.session_id WHERE r.hash = $1`,
        [hash],
      );
      const row = r.rows[0] as (SessionRow & { token_used_at: Date | null }) | undefined;
      return row ? { session: toSession(row), usedAt: row.token_used_at } : null;
    },

    async rotate(hash, next, now, opts = {}) {
      // No budget: a window that never ends and a count that is never reached. Both fit the
      // integer columns and casts (a larger configured number means "no limit" all the same).
      const budget = opts.budget ?? { rotations: MAX_INT, windowSeconds: 0 };
      const grace = Math.max(0, Math.floor(opts.graceSeconds ?? 0));
      const cookieGrace = Math.max(0, Math.floor(opts.cookieGraceSeconds ?? 0));
      const rotations = Math.min(budget.rotations, MAX_INT);
      const windowSeconds = Math.min(budget.windowSeconds, MAX_INT);
      const ended = windowOver('$3', '$7');
      const attempt = () =>
        db.query(
          `WITH used AS (
             UPDATE ${RT} r SET used_at = COALESCE(r.used_at, $3), salt = NULL
             FROM ${S} s
             WHERE r.hash = $1 AND s.id = r.session_id AND ${rotatable(RT, '$3', '$5')}
               AND (${ended} OR s.rotations_in_window < $6::int)
             RETURNING r.session_id, s.refresh_cookie
           ), successor AS (
             INSERT INTO ${RT} (hash, session_id, created_at, parent, salt)
             SELECT $2, session_id, $3, $1, CASE WHEN refresh_cookie THEN $8 END FROM used
             RETURNING session_id
           )
           UPDATE ${S} s SET last_used_at = $3, idle_expires_at = LEAST($4::timestamptz, s.expires_at),
             rotations_in_window = CASE WHEN ${ended} THEN 1 ELSE s.rotations_in_window + 1 END,
             rotation_window_start = CASE WHEN ${ended} THEN $3 ELSE s.rotation_window_start END
           FROM successor WHERE s.id = successor.session_id AND s.ended_at IS NULL
           RETURNING s.*`,
          [hash, next.hash, now, next.idleExpiresAt, grace, rotations, windowSeconds, next.salt ?? null],
        );
      // Only after a refusal (rare: reuse, an ended session, a loop), so the hot path stays one
      // statement: is the token still one that may rotate, and is the budget what refused it?
      // A cookie session's repeat within its window is found here too: it rotates nothing.
      const verdict = async () => {
        const r = await db.query(
          `SELECT ${rotatable(RT, '$2', '$3')} AS rotatable,
             NOT ${windowOver('$2', '$5')} AND s.rotations_in_window >= $4::int AS over_budget,
             s.rotation_window_start + $5::int * interval '1 second' AS retry_at,
             ${cookieRepeatSalt(RT, '$2', '$6')} AS repeat_salt, s.*
           FROM ${RT} r JOIN ${S} s ON s.id = r.session_id
           WHERE r.hash = $1`,
          [hash, now, grace, rotations, windowSeconds, cookieGrace],
        );
        return r.rows[0] as
          | (SessionRow & {
              rotatable: boolean;
              over_budget: boolean;
              retry_at: Date;
              repeat_salt: string | null;
            })
          | undefined;
      };
      try {
        // The verdict reads a later snapshot than the refused rotation: another request may
        // have rotated in between (a new window, a grace sibling), leaving this token able to
        // rotate after all. Try again then (a few times), rather than answer `null`, which the
        // caller would take for reuse and end the session.
        for (let tries = 0; tries < 3; tries++) {
          const r = await attempt();
          if (r.rows[0]) return toSession(r.rows[0]);
          const v = await verdict();
          if (v?.repeat_salt) return { repeat: 'cookie', session: toSession(v), salt: v.repeat_salt };
          if (!v?.rotatable) return null;
          if (v.over_budget) return { refused: 'budget', retryAt: v.retry_at };
        }
        return null;
      } catch (e) {
        // The successor hash is already stored (never for 256 random bits): the whole statement
        // rolled back, so the presented token is still unused.
        if (isUniqueViolation(e)) return null;
        throw e;
      }
    },

    async revoke(id, now, reason) {
      const r = await db.query(`UPDATE ${S} SET ${END} WHERE id = $1 AND ended_at IS NULL`, [
        id,
        now,
        reason,
      ]);
      return affected(r) === 1;
    },

    async revokeAllForUser(userId, now, { reason, exceptSid }) {
      const r = await db.query(
        `UPDATE ${S} SET ${END} WHERE user_id = $1 AND ended_at IS NULL AND ($4::text IS NULL OR id <> $4) RETURNING id`,
        [userId, now, reason, exceptSid ?? null],
      );
      return r.rows.map((x: { id: string }) => x.id);
    },

    async revokeAll(now, reason) {
      const r = await db.query(
        `UPDATE ${S} SET ended_at = $1, end_reason = $2, ended_xid = pg_current_xact_id() WHERE ended_at IS NULL`,
        [now, reason],
      );
      return affected(r);
    },

    async listForUser(userId, now) {
      const r = await db.query(
        `SELECT * FROM ${S} WHERE user_id = $1 AND ${LIVE} ORDER BY created_at DESC, seq DESC`,
        [userId, now],
      );
      return r.rows.map(toSession);
    },

    async endedSince(given, notBefore) {
      // The cursor is the snapshot of the last read (`xmin:xmax:xip,...`). What that read saw
      // was every end committed before it; what it could not see was ended by a transaction at
      // or above its xmax, or by one still running then (its xip list). Only those are read
      // again: re-reading from the snapshot's xmin would let one long transaction anywhere on
      // the cluster make every poll re-read every end since it began (decision 0502).
      // Anything else starts over from `notBefore`.
      const read = async (last: string | null) => {
        const r = await db.query(
          last === null
            ? `SELECT pg_current_snapshot()::text AS cursor,
                      array(SELECT id FROM ${S} WHERE ended_at >= $1 ORDER BY ended_xid) AS sids`
            : `SELECT pg_current_snapshot()::text AS cursor,
                      array(SELECT id FROM ${S}
                             WHERE ended_xid >= pg_snapshot_xmax($1::pg_snapshot)
                                -- = ANY of an array, not IN (subquery): the planner can use the
                                -- ended_xid index for both sides only so (a hashed subplan filter
                                -- scanned the whole table: 45 ms a poll at 200,000 sessions).
                                OR ended_xid = ANY(ARRAY(SELECT pg_snapshot_xip($1::pg_snapshot)))
                             ORDER BY ended_xid) AS sids`,
          [last === null ? notBefore : last],
        );
        return r.rows[0] as { cursor: string; sids: string[] };
      };
      const last = given === null ? null : xmaxOf(given);
      const page = await read(last === null ? null : given);
      // A cursor from ahead of this server (a failover that lost the tail, a restore, another
      // database behind the pool) would skip every end below its xmax for good: start over.
      if (last !== null && last > (xmaxOf(page.cursor) ?? -1n)) return read(null);
      return page;
    },
  };
}
