import {
  type DeliveryStatus,
  type InboxMessage,
  type InboxMessageStore,
  type MessageDirection,
  type MessageStatus,
  STATUS_RANK,
} from '@postern/core/ports';
import type { StoreDeps } from '../deps.js';
import { insertOrGet } from '../sql.js';

interface MessageRow {
  id: string;
  account_id: string;
  thread_id: string;
  direction: MessageDirection;
  provider_message_id: string;
  message_id: string | null;
  in_reply_to: string[];
  references: string[];
  from: string;
  from_address: string | null;
  reply_to: string | null;
  to: string[];
  cc: string[];
  recipients: string[];
  subject: string;
  subject_key: string;
  text: string;
  html: string | null;
  status: MessageStatus;
  opened_at: Date | null;
  open_count: number;
  clicked_at: Date | null;
  click_count: number;
  thread_keys: string[];
  created_at: Date;
  processed_at: Date | null;
}

const toMessage = (r: MessageRow): InboxMessage => ({
  id: r.id,
  accountId: r.account_id,
  threadId: r.thread_id,
  direction: r.direction,
  providerMessageId: r.provider_message_id,
  messageId: r.message_id,
  inReplyTo: r.in_reply_to,
  references: r.references,
  from: r.from,
  fromAddress: r.from_address,
  replyTo: r.reply_to,
  to: r.to,
  cc: r.cc,
  recipients: r.recipients,
  subject: r.subject,
  subjectKey: r.subject_key,
  text: r.text,
  html: r.html,
  status: r.status,
  openedAt: r.opened_at,
  openCount: r.open_count,
  clickedAt: r.clicked_at,
  clickCount: r.click_count,
  threadKeys: r.thread_keys,
  createdAt: r.created_at,
  processedAt: r.processed_at,
});

const COLUMNS = [
  'id',
  'account_id',
  'thread_id',
  'direction',
  'provider_message_id',
  'message_id',
  'in_reply_to',
  '"references"',
  '"from"',
  'from_address',
  'reply_to',
  '"to"',
  'cc',
  'recipients',
  'subject',
  'subject_key',
  'text',
  'html',
  'status',
  'opened_at',
  'open_count',
  'clicked_at',
  'click_count',
  'thread_keys',
  'created_at',
  'processed_at',
];

const values = (m: InboxMessage): unknown[] => [
  m.id,
  m.accountId,
  m.threadId,
  m.direction,
  m.providerMessageId,
  m.messageId,
  m.inReplyTo,
  m.references,
  m.from,
  m.fromAddress,
  m.replyTo,
  m.to,
  m.cc,
  m.recipients,
  m.subject,
  m.subjectKey,
  m.text,
  m.html,
  m.status,
  m.openedAt,
  m.openCount,
  m.clickedAt,
  m.clickCount,
  m.threadKeys,
  m.createdAt,
  m.processedAt,
];

/** The rank of a stored status in SQL, generated from the core's STATUS_RANK (one source). */
const RANK_SQL = `CASE status ${Object.entries(STATUS_RANK)
  .map(([s, r]) => `WHEN '${s}' THEN ${r}`)
  .join(' ')} ELSE 0 END`;

/** Messages. `(account_id, provider_message_id)` is unique: that constraint is the
 *  de-duplication of inbound mail. Delivery updates are single UPDATEs whose SET expressions
 *  only ever raise the status rank, so concurrent or out-of-order events cannot lower it. */
export function postgresInboxMessageStore({ db, t }: StoreDeps): InboxMessageStore {
  const T = t('inbox_messages');
  const placeholders = COLUMNS.map((_, i) => `$${i + 1}`).join(', ');
  const one = async (sql: string, params: unknown[]) => {
    const r = await db.query(sql, params);
    return r.rows[0] ? toMessage(r.rows[0]) : null;
  };
  const newest = 'ORDER BY created_at DESC, seq DESC LIMIT 1';

  return {
    async insert(m) {
      const { row, created } = await insertOrGet<MessageRow>(
        db,
        [
          `INSERT INTO ${T} (${COLUMNS.join(', ')}) VALUES (${placeholders})
           ON CONFLICT (account_id, provider_message_id) DO NOTHING RETURNING *`,
          values(m),
        ],
        [
          `SELECT * FROM ${T} WHERE account_id = $1 AND provider_message_id = $2`,
          [m.accountId, m.providerMessageId],
        ],
      );
      return { message: toMessage(row), created };
    },
    findById: (id) => one(`SELECT * FROM ${T} WHERE id = $1`, [id]),
    findByProviderId: (accountId, providerMessageId) =>
      one(`SELECT * FROM ${T} WHERE account_id = $1 AND provider_message_id = $2`, [
        accountId,
        providerMessageId,
      ]),
    async listOutboundByProviderId(providerMessageId) {
      const r = await db.query(
        `SELECT * FROM ${T} WHERE provider_message_id = $1 AND direction = 'outbound' ORDER BY seq`,
        [providerMessageId],
      );
      return r.rows.map(toMessage);
    },
    async listByThread(threadId) {
      const r = await db.query(`SELECT * FROM ${T} WHERE thread_id = $1 ORDER BY created_at, seq`, [
        threadId,
      ]);
      return r.rows.map(toMessage);
    },
    findOutboundByThreadKeys: (accountId, keys) =>
      one(
        `SELECT * FROM ${T} WHERE account_id = $1 AND direction = 'outbound' AND thread_keys && $2::text[] ${newest}`,
        [accountId, keys],
      ),
    findLatestBySubject: (accountId, subjectKey, since, opts = {}) =>
      one(
        `SELECT * FROM ${T}
         WHERE account_id = $1 AND md5(subject_key) = md5($2) AND subject_key = $2 AND created_at >= $3
           AND ($4::text IS NULL OR (direction = 'outbound' AND $4 = ANY(recipients)))
         ${newest}`,
        [accountId, subjectKey, since, opts.outboundTo ?? null],
      ),
    applyDelivery(id, update) {
      if (update.kind === 'status') {
        const status: DeliveryStatus = update.status;
        return one(
          `UPDATE ${T} SET status = CASE WHEN $3::int > ${RANK_SQL} THEN $2 ELSE status END
           WHERE id = $1 RETURNING *`,
          [id, status, STATUS_RANK[status]],
        );
      }
      const [at, count] =
        update.kind === 'opened' ? ['opened_at', 'open_count'] : ['clicked_at', 'click_count'];
      return one(
        `UPDATE ${T} SET ${count} = ${count} + 1, ${at} = LEAST(COALESCE(${at}, $2), $2)
         WHERE id = $1 RETURNING *`,
        [id, update.at],
      );
    },
    async markProcessed(id, at) {
      await db.query(`UPDATE ${T} SET processed_at = $2 WHERE id = $1 AND processed_at IS NULL`, [id, at]);
    },
  };
}
