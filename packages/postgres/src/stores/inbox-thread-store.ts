import type { InboxThread, InboxThreadStore } from '@postern/core/ports';
import type { StoreDeps } from '../deps.js';

interface ThreadRow {
  id: string;
  account_id: string;
  subject: string;
  subject_key: string;
  created_at: Date;
  last_message_at: Date;
  activity: number;
  message_count: number;
}

const toThread = (r: ThreadRow): InboxThread => ({
  id: r.id,
  accountId: r.account_id,
  subject: r.subject,
  subjectKey: r.subject_key,
  createdAt: r.created_at,
  lastMessageAt: r.last_message_at,
  activity: r.activity,
  messageCount: r.message_count,
});

/** First key of the per-subject threading lock: "thrd". */
const THREAD_LOCK_CLASS = 0x74687264;

/** Threads; the list is keyset-paginated on (last_message_at, activity, id), ids in byte order. */
export function postgresInboxThreadStore({ db, t }: StoreDeps): InboxThreadStore {
  const T = t('inbox_threads');
  const M = t('inbox_messages');
  return {
    async create(th) {
      await db.query(
        `INSERT INTO ${T} (id, account_id, subject, subject_key, created_at, last_message_at, message_count)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [th.id, th.accountId, th.subject, th.subjectKey, th.createdAt, th.lastMessageAt, th.messageCount],
      );
    },
    async findById(id) {
      const r = await db.query(`SELECT * FROM ${T} WHERE id = $1`, [id]);
      return r.rows[0] ? toThread(r.rows[0]) : null;
    },
    async listByAccount(accountId, { after, limit }) {
      const r = await db.query(
        `SELECT * FROM ${T}
         WHERE account_id = $1 AND message_count > 0
           AND ($2::timestamptz IS NULL
                OR (last_message_at, activity, id) < ($2::timestamptz, $3::integer, $4::text COLLATE "C"))
         ORDER BY last_message_at DESC, activity DESC, id DESC
         LIMIT $5`,
        [accountId, after?.lastMessageAt ?? null, after?.activity ?? null, after?.id ?? null, limit],
      );
      return r.rows.map(toThread);
    },
    async touch(id, at) {
      await db.query(
        // Above the account's other threads of that millisecond (an index lookup of the list index).
        `UPDATE ${T} AS th SET message_count = th.message_count + 1,
           last_message_at = GREATEST(th.last_message_at, $2),
           activity = CASE WHEN $2 < th.last_message_at THEN th.activity ELSE 1 + (
             SELECT COALESCE(max(o.activity), 0) FROM ${T} o
              WHERE o.account_id = th.account_id AND o.last_message_at = $2 AND o.message_count > 0) END
         WHERE th.id = $1`,
        [id, at],
      );
    },
    async lockSubject(accountId, subjectKey) {
      // Transaction-scoped: released at commit. The table name keeps schemas apart.
      await db.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [
        THREAD_LOCK_CLASS,
        `${T}\n${accountId}\n${subjectKey}`,
      ]);
    },
    async deleteIfEmpty(id) {
      await db.query(
        `DELETE FROM ${T} WHERE id = $1 AND message_count = 0 AND NOT EXISTS (SELECT 1 FROM ${M} WHERE thread_id = $1)`,
        [id],
      );
    },
  };
}
