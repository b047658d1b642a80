import type { User, UserStore } from '@postern/core/ports';
import { affected } from '../db.js';
import type { StoreDeps } from '../deps.js';
import { isUniqueViolation } from '../sql.js';

interface UserRow {
  id: string;
  email: string;
  name: string;
  password_hash: string;
  roles: string[];
  email_verified: boolean;
  disabled: boolean;
  created_at: Date;
  password_changed_at: Date;
}

const toUser = (r: UserRow): User => ({
  id: r.id,
  email: r.email,
  name: r.name,
  passwordHash: r.password_hash,
  roles: r.roles,
  emailVerified: r.email_verified,
  disabled: r.disabled,
  createdAt: r.created_at,
  passwordChangedAt: r.password_changed_at,
});

/** Tables whose rows belong to one user (`user_id`) and go with it. Sessions stay: the caller
 *  ends them first, and ended sessions feed the ended-sid list. */
const USER_DATA = [
  'mfa_factors',
  'mfa_pending_totp',
  'pending_logins',
  'mfa_email_codes',
  'mfa_recovery_codes',
  'webauthn_credentials',
  'webauthn_challenges',
];

/** Users; the unique index on the canonical email decides concurrent signups. */
export function postgresUserStore({ db, t, inTransaction }: StoreDeps): UserStore {
  const T = t('users');
  const one = async (sql: string, values: unknown[]) => {
    const r = await db.query(sql, values);
    return r.rows[0] ? toUser(r.rows[0]) : null;
  };
  const changed = async (sql: string, values: unknown[]) => affected(await db.query(sql, values)) === 1;
  // One statement, so atomic without a transaction: the user, and with it the rows kept
  // under its id (nothing when the user is absent).
  const cascade = USER_DATA.map(
    (table, i) => `, d${i} AS (DELETE FROM ${t(table)} WHERE user_id = $1 AND EXISTS (SELECT FROM gone))`,
  ).join('\n');
  const deleteUser = `WITH gone AS (DELETE FROM ${T} WHERE id = $1 RETURNING id)\n${cascade}\nSELECT id FROM gone`;

  return {
    create: (u) =>
      one(
        `INSERT INTO ${T} (id, email, name, password_hash, roles, email_verified, disabled, created_at, password_changed_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT DO NOTHING RETURNING *`,
        [
          u.id,
          u.email,
          u.name,
          u.passwordHash,
          u.roles,
          u.emailVerified,
          u.disabled,
          u.createdAt,
          u.passwordChangedAt,
        ],
      ),
    findById: (id) => one(`SELECT * FROM ${T} WHERE id = $1`, [id]),
    // The share lock waits for a transaction holding the row (its UPDATE) and reads what it
    // committed. Called on the pool's stores it is released at once (one statement); inside a
    // transaction it would be held to its end, so the flows never call it there.
    findByIdSettled: (id) => one(`SELECT * FROM ${T} WHERE id = $1 FOR SHARE`, [id]),
    findByEmail: (email) => one(`SELECT * FROM ${T} WHERE email = $1`, [email]),
    setPassword: (id, { passwordHash, changedAt, ifHash }) =>
      changed(
        `UPDATE ${T} SET password_hash = $2, password_changed_at = $3
         WHERE id = $1 AND ($4::text IS NULL OR password_hash = $4)`,
        [id, passwordHash, changedAt, ifHash ?? null],
      ),
    setDisabled: (id, disabled) => changed(`UPDATE ${T} SET disabled = $2 WHERE id = $1`, [id, disabled]),
    setRoles: (id, roles) => changed(`UPDATE ${T} SET roles = $2 WHERE id = $1`, [id, roles]),
    async changeEmail(id, email) {
      const update = `UPDATE ${T} SET email = $2, email_verified = true WHERE id = $1`;
      // Inside a transaction a unique violation would abort all of it: a savepoint keeps the
      // caller's transaction usable (and its earlier writes) when the answer is `taken`.
      if (inTransaction) await db.query('SAVEPOINT ph_change_email');
      try {
        const done = await changed(update, [id, email]);
        if (inTransaction) await db.query('RELEASE SAVEPOINT ph_change_email');
        return done ? 'changed' : 'absent';
      } catch (e) {
        if (!isUniqueViolation(e)) throw e;
        if (inTransaction) await db.query('ROLLBACK TO SAVEPOINT ph_change_email');
        return 'taken';
      }
    },
    markEmailVerified: (id) => changed(`UPDATE ${T} SET email_verified = true WHERE id = $1`, [id]),
    delete: (id) => changed(deleteUser, [id]),
  };
}
