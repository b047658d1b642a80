import type { MfaFactor, MfaFactorStore, MfaMethod, PendingTotp, SealedSecret } from '@postern/core/ports';
import { affected } from '../db.js';
import type { StoreDeps } from '../deps.js';

interface FactorRow {
  user_id: string;
  type: MfaFactor['type'];
  enabled_at: Date;
  secret: SealedSecret | null;
  last_step: string | null;
}

const toFactor = (r: FactorRow): MfaFactor => {
  const f: MfaFactor = { userId: r.user_id, type: r.type, enabledAt: r.enabled_at };
  if (r.secret !== null) f.secret = r.secret;
  if (r.last_step !== null) f.lastStep = Number(r.last_step);
  return f;
};

/** TOTP replay protection is a compare-and-set on `last_step` in one UPDATE; confirming a
 *  pending seed moves it into the factors table in one statement (DELETE ... RETURNING feeding
 *  an upsert), so only one of two concurrent confirmations can find the seed. */
export function postgresMfaFactorStore({ db, t }: StoreDeps): MfaFactorStore {
  const F = t('mfa_factors');
  const P = t('mfa_pending_totp');
  const W = t('webauthn_credentials');
  return {
    async listMethods(userId) {
      const r = await db.query(
        `SELECT type FROM ${F} WHERE user_id = $1
         UNION ALL
         SELECT 'webauthn' WHERE EXISTS (SELECT 1 FROM ${W} WHERE user_id = $1)`,
        [userId],
      );
      return (r.rows as Array<{ type: MfaMethod }>).map((x) => x.type);
    },
    async listFactors(userId) {
      const r = await db.query(`SELECT * FROM ${F} WHERE user_id = $1 ORDER BY type`, [userId]);
      return r.rows.map(toFactor);
    },
    async getFactor(userId, type) {
      const r = await db.query(`SELECT * FROM ${F} WHERE user_id = $1 AND type = $2`, [userId, type]);
      return r.rows[0] ? toFactor(r.rows[0]) : null;
    },
    async enableFactor(f) {
      await db.query(
        `INSERT INTO ${F} (user_id, type, enabled_at, secret, last_step) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (user_id, type) DO UPDATE
           SET enabled_at = EXCLUDED.enabled_at, secret = EXCLUDED.secret, last_step = EXCLUDED.last_step`,
        [f.userId, f.type, f.enabledAt, f.secret ? JSON.stringify(f.secret) : null, f.lastStep ?? null],
      );
    },
    async removeFactor(userId, type) {
      const r = await db.query(
        `WITH seed AS (DELETE FROM ${P} WHERE user_id = $1 AND $2 = 'totp')
         DELETE FROM ${F} WHERE user_id = $1 AND type = $2`,
        [userId, type],
      );
      return affected(r) === 1;
    },
    async acceptTotpStep(userId, step) {
      const r = await db.query(
        `UPDATE ${F} SET last_step = $2 WHERE user_id = $1 AND type = 'totp' AND COALESCE(last_step, -1) < $2`,
        [userId, step],
      );
      return affected(r) === 1;
    },
    async savePendingTotp(p) {
      await db.query(
        `INSERT INTO ${P} (user_id, secret, expires_at) VALUES ($1, $2, $3)
         ON CONFLICT (user_id) DO UPDATE SET secret = EXCLUDED.secret, expires_at = EXCLUDED.expires_at`,
        [p.userId, JSON.stringify(p.secret), p.expiresAt],
      );
    },
    async getPendingTotp(userId, now) {
      const r = await db.query(`SELECT * FROM ${P} WHERE user_id = $1 AND expires_at > $2`, [userId, now]);
      const row = r.rows[0] as { user_id: string; secret: SealedSecret; expires_at: Date } | undefined;
      return row
        ? ({ userId: row.user_id, secret: row.secret, expiresAt: row.expires_at } satisfies PendingTotp)
        : null;
    },
    async confirmPendingTotp(userId, secret, step, now) {
      const r = await db.query(
        `WITH seed AS (
           DELETE FROM ${P} WHERE user_id = $1 AND expires_at > $3 AND secret->>'data' = $2
           RETURNING secret
         )
         INSERT INTO ${F} (user_id, type, enabled_at, secret, last_step)
         SELECT $1, 'totp', $3, secret, $4 FROM seed
         ON CONFLICT (user_id, type) DO UPDATE
           SET enabled_at = EXCLUDED.enabled_at, secret = EXCLUDED.secret, last_step = EXCLUDED.last_step`,
        [userId, secret.data, now, step],
      );
      return affected(r) === 1;
    },
  };
}
