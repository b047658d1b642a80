import type { RecoveryCode, RecoveryCodeStore } from '@postern/core/ports';
import { affected, type Queryable } from '../db.js';
import type { StoreDeps } from '../deps.js';

interface RecoveryRow {
  id: string;
  user_id: string;
  selector: string;
  hash: string;
  created_at: Date;
}

const toCode = (r: RecoveryRow): RecoveryCode => ({
  id: r.id,
  userId: r.user_id,
  selector: r.selector,
  hash: r.hash,
  createdAt: r.created_at,
});

/** Unused recovery codes; using one is a DELETE that only one caller can win. Writing a set
 *  takes a per-user lock so two regenerations cannot leave both sets alive, nor two first
 *  factors both store one. */
export function postgresRecoveryCodeStore({ db, t, atomic }: StoreDeps): RecoveryCodeStore {
  const T = t('mfa_recovery_codes');
  const lock = (tx: Queryable, userId: string) =>
    tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`${T}:${userId}`]);
  const insert = async (tx: Queryable, userId: string, codes: RecoveryCode[]) => {
    if (codes.length === 0) return;
    await tx.query(
      `INSERT INTO ${T} (id, user_id, selector, hash, created_at)
       SELECT id, $1, selector, hash, created_at
       FROM unnest($2::text[], $3::text[], $4::text[], $5::timestamptz[])
         WITH ORDINALITY AS c(id, selector, hash, created_at, n)
       ORDER BY n`,
      [
        userId,
        codes.map((c) => c.id),
        codes.map((c) => c.selector),
        codes.map((c) => c.hash),
        codes.map((c) => c.createdAt),
      ],
    );
  };
  return {
    replaceAll: (userId, codes) =>
      atomic(async (tx) => {
        await lock(tx, userId);
        await tx.query(`DELETE FROM ${T} WHERE user_id = $1`, [userId]);
        await insert(tx, userId, codes);
      }),
    addIfNone: (userId, codes) =>
      atomic(async (tx) => {
        await lock(tx, userId);
        const held = await tx.query(`SELECT 1 FROM ${T} WHERE user_id = $1 LIMIT 1`, [userId]);
        if (held.rows.length > 0) return false;
        await insert(tx, userId, codes);
        return true;
      }),
    async listUnused(userId) {
      const r = await db.query(`SELECT * FROM ${T} WHERE user_id = $1 ORDER BY seq`, [userId]);
      return r.rows.map(toCode);
    },
    async use(userId, id) {
      return affected(await db.query(`DELETE FROM ${T} WHERE user_id = $1 AND id = $2`, [userId, id])) === 1;
    },
    async deleteAll(userId) {
      await db.query(`DELETE FROM ${T} WHERE user_id = $1`, [userId]);
    },
  };
}
