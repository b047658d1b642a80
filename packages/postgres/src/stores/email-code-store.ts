import { timingSafeEqual } from 'node:crypto';
import type { EmailCodeStore } from '@postern/core/ports';
import type { StoreDeps } from '../deps.js';

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Emailed codes. `consume` locks the row, compares the hash in constant time in the process
 *  (not with SQL `=`), and deletes it only on a match: one winner, and a wrong guess leaves the
 *  code in place. */
export function postgresEmailCodeStore({ db, t, atomic }: StoreDeps): EmailCodeStore {
  const T = t('mfa_email_codes');
  return {
    async put(c) {
      await db.query(
        `INSERT INTO ${T} (key, user_id, code_hash, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (key) DO UPDATE SET user_id = EXCLUDED.user_id, code_hash = EXCLUDED.code_hash,
           created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at`,
        [c.key, c.userId, c.codeHash, c.createdAt, c.expiresAt],
      );
    },
    consume: (key, codeHash, now) =>
      atomic(async (tx) => {
        const r = await tx.query(`SELECT code_hash FROM ${T} WHERE key = $1 AND expires_at > $2 FOR UPDATE`, [
          key,
          now,
        ]);
        const row = r.rows[0] as { code_hash: string } | undefined;
        if (!row || !sameText(row.code_hash, codeHash)) return false;
        await tx.query(`DELETE FROM ${T} WHERE key = $1`, [key]);
        return true;
      }),
    async matches(key, codeHash, now) {
      const r = await db.query(`SELECT code_hash FROM ${T} WHERE key = $1 AND expires_at > $2`, [key, now]);
      const row = r.rows[0] as { code_hash: string } | undefined;
      return !!row && sameText(row.code_hash, codeHash);
    },
    async has(key, now) {
      const r = await db.query(`SELECT 1 FROM ${T} WHERE key = $1 AND expires_at > $2`, [key, now]);
      return r.rows.length > 0;
    },
    async delete(key) {
      await db.query(`DELETE FROM ${T} WHERE key = $1`, [key]);
    },
  };
}
