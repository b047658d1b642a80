import type { ResetCode, ResetCodeStore } from '@postern/core/ports';
import type { StoreDeps } from '../deps.js';

interface ResetRow {
  user_id: string;
  hash: string;
  /** Null for codes made before migration 0008 (or by a not yet upgraded instance). */
  email: string | null;
  created_at: Date;
  expires_at: Date;
}

const toCode = (r: ResetRow): ResetCode => ({
  hash: r.hash,
  userId: r.user_id,
  email: r.email ?? '',
  createdAt: r.created_at,
  expiresAt: r.expires_at,
});

/** One row per user: a new code replaces the old one in one upsert, and consuming is a
 *  `DELETE ... RETURNING` that only one caller can win. */
export function postgresResetCodeStore({ db, t }: StoreDeps): ResetCodeStore {
  const T = t('reset_codes');
  return {
    async create(code) {
      await db.query(
        `INSERT INTO ${T} (user_id, hash, email, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (user_id) DO UPDATE
           SET hash = EXCLUDED.hash, email = EXCLUDED.email, created_at = EXCLUDED.created_at,
               expires_at = EXCLUDED.expires_at`,
        [code.userId, code.hash, code.email, code.createdAt, code.expiresAt],
      );
    },
    async find(hash, now) {
      const r = await db.query(`SELECT * FROM ${T} WHERE hash = $1 AND expires_at > $2`, [hash, now]);
      return r.rows[0] ? toCode(r.rows[0]) : null;
    },
    async consume(hash, now) {
      const r = await db.query(`DELETE FROM ${T} WHERE hash = $1 AND expires_at > $2 RETURNING *`, [
        hash,
        now,
      ]);
      return r.rows[0] ? toCode(r.rows[0]) : null;
    },
    async voidForUser(userId) {
      await db.query(`DELETE FROM ${T} WHERE user_id = $1`, [userId]);
    },
  };
}
