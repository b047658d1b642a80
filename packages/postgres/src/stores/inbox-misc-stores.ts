import type {
  InboxAttachment,
  InboxAttachmentStore,
  InboxNotificationStore,
  MailEvent,
  MailEventStore,
} from '@postern/core/ports';
import { affected } from '../db.js';
import type { StoreDeps } from '../deps.js';
import { insertOrGet } from '../sql.js';
import { PRESENCE_CLASS, presenceGone } from '../wake.js';

interface AttachmentRow {
  id: string;
  account_id: string;
  message_id: string;
  source_key: string;
  filename: string;
  content_type: string;
  size: string;
  content_id: string | null;
  inline: boolean;
  file_key: string;
  created_at: Date;
}

const toAttachment = (r: AttachmentRow): InboxAttachment => ({
  id: r.id,
  accountId: r.account_id,
  messageId: r.message_id,
  sourceKey: r.source_key,
  filename: r.filename,
  contentType: r.content_type,
  size: Number(r.size),
  contentId: r.content_id,
  inline: r.inline,
  fileKey: r.file_key,
  createdAt: r.created_at,
});

/** Attachment metadata; `(message_id, source_key)` is unique, so a retried event finds the row. */
export function postgresInboxAttachmentStore({ db, t }: StoreDeps): InboxAttachmentStore {
  const T = t('inbox_attachments');
  return {
    async insert(a) {
      const { row } = await insertOrGet<AttachmentRow>(
        db,
        [
          `INSERT INTO ${T} (id, account_id, message_id, source_key, filename, content_type, size, content_id, inline, file_key, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
           ON CONFLICT (message_id, source_key) DO NOTHING RETURNING *`,
          [
            a.id,
            a.accountId,
            a.messageId,
            a.sourceKey,
            a.filename,
            a.contentType,
            a.size,
            a.contentId,
            a.inline,
            a.fileKey,
            a.createdAt,
          ],
        ],
        [`SELECT * FROM ${T} WHERE message_id = $1 AND source_key = $2`, [a.messageId, a.sourceKey]],
      );
      return toAttachment(row);
    },
    async findById(id) {
      const r = await db.query(`SELECT * FROM ${T} WHERE id = $1`, [id]);
      return r.rows[0] ? toAttachment(r.rows[0]) : null;
    },
    async findBySource(messageId, sourceKey) {
      const r = await db.query(`SELECT * FROM ${T} WHERE message_id = $1 AND source_key = $2`, [
        messageId,
        sourceKey,
      ]);
      return r.rows[0] ? toAttachment(r.rows[0]) : null;
    },
    async listByMessages(messageIds) {
      if (messageIds.length === 0) return [];
      const r = await db.query(`SELECT * FROM ${T} WHERE message_id = ANY($1::text[]) ORDER BY seq`, [
        messageIds,
      ]);
      return r.rows.map(toAttachment);
    },
  };
}

interface MailEventRow {
  id: string;
  type: string;
  kind: MailEvent['kind'];
  status: MailEvent['status'];
  provider_message_id: string;
  occurred_at: Date;
  recorded_at: Date;
  detail: string | null;
  applied_at: Date | null;
}

const toMailEvent = (r: MailEventRow): MailEvent => ({
  id: r.id,
  type: r.type,
  kind: r.kind,
  status: r.status,
  providerMessageId: r.provider_message_id,
  occurredAt: r.occurred_at,
  recordedAt: r.recorded_at,
  detail: r.detail,
  appliedAt: r.applied_at,
});

/** `mail_event` rows keyed by their outbox event id; applying is a one-winner UPDATE meant to
 *  share a transaction with the message update. */
export function postgresMailEventStore({ db, t }: StoreDeps): MailEventStore {
  const T = t('mail_events');
  return {
    async record(e) {
      const { row, created } = await insertOrGet<MailEventRow>(
        db,
        [
          `INSERT INTO ${T} (id, type, kind, status, provider_message_id, occurred_at, recorded_at, detail, applied_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
           ON CONFLICT (id) DO NOTHING RETURNING *`,
          [
            e.id,
            e.type,
            e.kind,
            e.status,
            e.providerMessageId,
            e.occurredAt,
            e.recordedAt,
            e.detail,
            e.appliedAt,
          ],
        ],
        [`SELECT * FROM ${T} WHERE id = $1`, [e.id]],
      );
      return { event: toMailEvent(row), created };
    },
    async findById(id) {
      const r = await db.query(`SELECT * FROM ${T} WHERE id = $1`, [id]);
      return r.rows[0] ? toMailEvent(r.rows[0]) : null;
    },
    async listPending(providerMessageId) {
      const r = await db.query(
        `SELECT * FROM ${T} WHERE provider_message_id = $1 AND applied_at IS NULL ORDER BY occurred_at, seq`,
        [providerMessageId],
      );
      return r.rows.map(toMailEvent);
    },
    async markApplied(id, at) {
      return (
        affected(
          await db.query(`UPDATE ${T} SET applied_at = $2 WHERE id = $1 AND applied_at IS NULL`, [id, at]),
        ) === 1
      );
    },
    async purge({ unmatchedBefore, appliedBefore }, limit) {
      // One short statement per kind, oldest first by its own partial index; rows another
      // transaction holds (being applied right now) are skipped, never waited for.
      const batch = (applied: boolean, before: Date, max: number | null) =>
        db.query(
          `DELETE FROM ${T} WHERE id IN (
             SELECT id FROM ${T} WHERE applied_at IS ${applied ? 'NOT ' : ''}NULL AND recorded_at < $1
             ORDER BY recorded_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
          [before, max],
        );
      const unmatched = affected(await batch(false, unmatchedBefore, limit ?? null));
      if (limit !== undefined && unmatched >= limit) return unmatched;
      const left = limit === undefined ? null : limit - unmatched;
      return unmatched + affected(await batch(true, appliedBefore, left));
    },
  };
}

/** Notification idempotency: a claim is an upsert whose conflict branch only takes the key when
 *  it is neither completed nor leased at `now` (the row lock makes that check one-winner). A
 *  lease taken by a worker process that has died (its presence lock is gone, see wake.ts) counts
 *  as run out, so the redelivered event notifies instead of skipping a member forever. */
export function postgresInboxNotificationStore({ db, t, wake }: StoreDeps): InboxNotificationStore {
  const T = t('inbox_notifications');
  return {
    async claim(key, now, leaseUntil, holder) {
      const r = await db.query(
        `INSERT INTO ${T} AS n (key, lease_until, owner, holder) VALUES ($1, $3, $4, $6)
         ON CONFLICT (key) DO UPDATE SET lease_until = EXCLUDED.lease_until, owner = EXCLUDED.owner, holder = EXCLUDED.holder
         WHERE n.completed_at IS NULL
           AND (n.lease_until IS NULL OR n.lease_until < $2 OR (n.owner IS NOT NULL AND ${presenceGone('n.owner', '$5')}))`,
        [key, now, leaseUntil, wake?.presenceKey() ?? null, PRESENCE_CLASS, holder],
      );
      if (affected(r) === 1) return 'claimed';
      // Not taken: sent, or another claim's lease runs. A claim released in between reads as
      // held (by nobody), and the caller treats it as another's.
      const row = await db.query(`SELECT completed_at IS NOT NULL AS done, holder FROM ${T} WHERE key = $1`, [
        key,
      ]);
      const found = row.rows[0] as { done: boolean; holder: string | null } | undefined;
      return found?.done ? 'completed' : { heldBy: found?.holder ?? null };
    },
    async complete(key, now) {
      await db.query(
        `INSERT INTO ${T} AS n (key, completed_at) VALUES ($1, $2)
         ON CONFLICT (key) DO UPDATE SET completed_at = COALESCE(n.completed_at, EXCLUDED.completed_at), lease_until = NULL, owner = NULL, holder = NULL`,
        [key, now],
      );
    },
    async release(key) {
      await db.query(`DELETE FROM ${T} WHERE key = $1 AND completed_at IS NULL`, [key]);
    },
  };
}
