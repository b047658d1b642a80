import type { InboxThread, InboxThreadStore } from '@gatehouse/core';
import type { StoreDeps } from '../deps.js';

interface ThreadRow {
  id: string;
  account_id: string;
  subject: string;
  subject_key: string;
  created_at: Date;
  last_message_at: Date;
  /** bigint: node-postgres hands it over as a string. */
  activity: string;
  message_count: number;
}

const toThread = (r: ThreadRow): InboxThread => ({
  id: r.id,
  accountId: r.account_id,
  subject: r.subject,
  subjectKey: r.subject_key,
  createdAt: r.created_at,
  lastMessageAt: r.last_message_at,
  activity: Number(r.activity),
  messageCount: r.message_count,
});

/** Threads; the list is keyset-paginated on (last_message_at, activity). */
/** First key of the per-subject threading lock: "thrd". */
const THREAD_LOCK_CLASS = 0x74687264;

export function postgresInboxThreadStore({ db, t }: StoreDeps): InboxThreadStore {
  const T = t('inbox_threads');
  const M = t('inbox_messages');
  const activity = t('inbox_thread_activity');
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
           AND ($2::timestamptz IS NULL OR (last_message_at, activity) < ($2::timestamptz, $3::bigint))
         ORDER BY last_message_at DESC, activity DESC
         LIMIT $4`,
        [accountId, after?.lastMessageAt ?? null, after?.activity ?? null, limit],
      );
      return r.rows.map(toThread);
    },
    async touch(id, at) {
      await db.query(
        `UPDATE ${T} SET message_count = message_count + 1, last_message_at = GREATEST(last_message_at, $2),
           activity = CASE WHEN $2 >= last_message_at THEN nextval('${activity}') ELSE activity END
         WHERE id = $1`,
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
