import type { InboxAccount, InboxAccountStore, InboxMembership, InboxRole } from '@postern/core/ports';
import type { StoreDeps } from '../deps.js';

interface AccountRow {
  id: string;
  address: string;
  name: string;
  created_at: Date;
}
interface MemberRow {
  account_id: string;
  user_id: string;
  role: InboxRole;
  created_at: Date;
  added_by: string | null;
}

const toAccount = (r: AccountRow): InboxAccount => ({
  id: r.id,
  address: r.address,
  name: r.name,
  createdAt: r.created_at,
});
const toMember = (r: MemberRow): InboxMembership => ({
  accountId: r.account_id,
  userId: r.user_id,
  role: r.role,
  createdAt: r.created_at,
  addedBy: r.added_by,
});

/** Accounts and memberships. The account and its owner are inserted in one statement; member
 *  changes of one account take turns (a transaction lock per account), so the last owner check
 *  cannot be raced. */
export function postgresInboxAccountStore({ db, t, atomic }: StoreDeps): InboxAccountStore {
  const A = t('inbox_accounts');
  const M = t('inbox_members');
  const membershipOf = async (accountId: string, userId: string) => {
    const r = await db.query(`SELECT * FROM ${M} WHERE account_id = $1 AND user_id = $2`, [
      accountId,
      userId,
    ]);
    return r.rows[0] ? toMember(r.rows[0]) : null;
  };
  return {
    async create(account, ownerUserId) {
      const r = await db.query(
        `WITH a AS (
           INSERT INTO ${A} (id, address, name, created_at) VALUES ($1, $2, $3, $4)
           ON CONFLICT DO NOTHING RETURNING *
         ), m AS (
           INSERT INTO ${M} (account_id, user_id, role, created_at, added_by)
           SELECT id, $5, 'owner', created_at, NULL FROM a
         )
         SELECT * FROM a`,
        [account.id, account.address, account.name, account.createdAt, ownerUserId],
      );
      return r.rows[0] ? toAccount(r.rows[0]) : null;
    },
    async findById(id) {
      const r = await db.query(`SELECT * FROM ${A} WHERE id = $1`, [id]);
      return r.rows[0] ? toAccount(r.rows[0]) : null;
    },
    async findByAddress(address) {
      const r = await db.query(`SELECT * FROM ${A} WHERE address = $1`, [address]);
      return r.rows[0] ? toAccount(r.rows[0]) : null;
    },
    async listForUser(userId) {
      const r = await db.query(
        `SELECT a.*, m.role, m.added_by FROM ${M} m JOIN ${A} a ON a.id = m.account_id
         WHERE m.user_id = $1 ORDER BY a.created_at, a.id`,
        [userId],
      );
      return r.rows.map((row: AccountRow & { role: InboxRole; added_by: string | null }) => ({
        account: toAccount(row),
        role: row.role,
        addedBy: row.added_by,
      }));
    },
    async roleOf(accountId, userId) {
      return (await membershipOf(accountId, userId))?.role ?? null;
    },
    membershipOf,
    // One statement: the creator's rows are promoted and the others deleted from one snapshot
    // (a concurrent demotion of the creator is waited for, then promoted again).
    async dropGrantsOf(userId) {
      const r = await db.query(
        `WITH created AS (
           UPDATE ${M} SET role = 'owner' WHERE user_id = $1 AND added_by IS NULL RETURNING account_id
         ), gone AS (
           DELETE FROM ${M}
           WHERE user_id <> $1 AND (added_by = $1 OR account_id IN (SELECT account_id FROM created))
           RETURNING 1
         )
         SELECT count(*)::int AS n FROM gone`,
        [userId],
      );
      return r.rows[0].n as number;
    },
    async listMembers(accountId) {
      const r = await db.query(`SELECT * FROM ${M} WHERE account_id = $1 ORDER BY seq`, [accountId]);
      return r.rows.map(toMember);
    },
    setMember: (accountId, userId, role, now, addedBy) =>
      atomic(async (tx) => {
        await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`${M}:${accountId}`]);
        const cur = await tx.query(`SELECT role FROM ${M} WHERE account_id = $1 AND user_id = $2`, [
          accountId,
          userId,
        ]);
        const existing = cur.rows[0] as { role: InboxRole } | undefined;
        if (existing?.role === 'owner' && role === 'member') {
          const owners = await tx.query(
            `SELECT count(*)::int AS n FROM ${M} WHERE account_id = $1 AND role = 'owner'`,
            [accountId],
          );
          if (owners.rows[0].n <= 1) return 'last_owner' as const;
        }
        const r = await tx.query(
          `INSERT INTO ${M} (account_id, user_id, role, created_at, added_by) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (account_id, user_id) DO UPDATE SET role = EXCLUDED.role
           RETURNING *`,
          [accountId, userId, role, now, addedBy],
        );
        return { membership: toMember(r.rows[0]), created: existing === undefined };
      }),
  };
}
