import type { ClaimSendResult, MfaMethod, PendingLogin, PendingLoginStore } from '@postern/core/ports';
import { affected } from '../db.js';
import type { StoreDeps } from '../deps.js';
import { backgroundSweep } from '../sweeper.js';

interface PendingRow {
  jti: string;
  user_id: string;
  refresh: boolean;
  refresh_cookie: boolean;
  methods: MfaMethod[];
  created_at: Date;
  expires_at: Date;
  failures: number;
  sends: number;
  last_sent_at: Date | null;
}

const toPending = (r: PendingRow): PendingLogin => ({
  jti: r.jti,
  userId: r.user_id,
  refresh: r.refresh_cookie ? 'cookie' : r.refresh,
  methods: r.methods,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  failures: r.failures,
  sends: r.sends,
  lastSentAt: r.last_sent_at,
});

/** Expired MFA rows nobody asks for again are deleted every this many pending logins, in the
 *  background. */
const SWEEP_EVERY = 256;

/** Pending logins. Single use is `DELETE ... RETURNING`; counting failures and claiming a send
 *  read the row `FOR UPDATE` first, so concurrent callers take turns on it. */
export function postgresPendingLoginStore({
  db,
  t,
  atomic,
  logger,
  inTransaction,
}: StoreDeps): PendingLoginStore {
  const T = t('pending_logins');

  const sweep = backgroundSweep({
    every: SWEEP_EVERY,
    inTransaction,
    logger,
    event: 'mfa_sweep_failed',
    run: (now) =>
      db.query(
        `WITH a AS (DELETE FROM ${T} WHERE expires_at <= $1),
              b AS (DELETE FROM ${t('mfa_email_codes')} WHERE expires_at <= $1),
              c AS (DELETE FROM ${t('webauthn_challenges')} WHERE expires_at <= $1)
         DELETE FROM ${t('mfa_pending_totp')} WHERE expires_at <= $1`,
        [now],
      ),
  });

  /** The live row, locked until the surrounding transaction ends. */
  const lockLive = async (tx: typeof db, jti: string, now: Date): Promise<PendingRow | null> => {
    const r = await tx.query(`SELECT * FROM ${T} WHERE jti = $1 AND expires_at > $2 FOR UPDATE`, [jti, now]);
    return (r.rows[0] as PendingRow | undefined) ?? null;
  };

  return {
    async create(p) {
      await db.query(
        `INSERT INTO ${T} (jti, user_id, refresh, refresh_cookie, methods, created_at, expires_at, failures, sends, last_sent_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [
          p.jti,
          p.userId,
          p.refresh !== false,
          p.refresh === 'cookie',
          p.methods,
          p.createdAt,
          p.expiresAt,
          p.failures,
          p.sends,
          p.lastSentAt,
        ],
      );
      sweep(p.createdAt);
    },

    async get(jti, now) {
      const r = await db.query(`SELECT * FROM ${T} WHERE jti = $1 AND expires_at > $2`, [jti, now]);
      return r.rows[0] ? toPending(r.rows[0]) : null;
    },

    recordFailure: (jti, max, now) =>
      atomic(async (tx) => {
        const row = await lockLive(tx, jti, now);
        if (!row) return null;
        const failures = row.failures + 1;
        if (failures >= max) await tx.query(`DELETE FROM ${T} WHERE jti = $1`, [jti]);
        else await tx.query(`UPDATE ${T} SET failures = $2 WHERE jti = $1`, [jti, failures]);
        return failures;
      }),

    async consume(jti, now) {
      const r = await db.query(`DELETE FROM ${T} WHERE jti = $1 AND expires_at > $2 RETURNING *`, [jti, now]);
      return r.rows[0] ? toPending(r.rows[0]) : null;
    },

    claimSend: (jti, now, { cooldownSeconds, maxSends }) =>
      atomic(async (tx): Promise<ClaimSendResult | null> => {
        const row = await lockLive(tx, jti, now);
        if (!row) return null;
        if (row.sends >= maxSends) {
          const left = Math.ceil((row.expires_at.getTime() - now.getTime()) / 1000);
          return { ok: false, reason: 'exhausted', retryAfterSeconds: Math.max(1, left) };
        }
        if (row.last_sent_at) {
          const since = (now.getTime() - row.last_sent_at.getTime()) / 1000;
          if (since < cooldownSeconds) {
            return { ok: false, reason: 'cooldown', retryAfterSeconds: Math.ceil(cooldownSeconds - since) };
          }
        }
        await tx.query(`UPDATE ${T} SET sends = sends + 1, last_sent_at = $2 WHERE jti = $1`, [jti, now]);
        return { ok: true, sends: row.sends + 1 };
      }),

    async voidForUser(userId) {
      return affected(await db.query(`DELETE FROM ${T} WHERE user_id = $1`, [userId]));
    },
  };
}
