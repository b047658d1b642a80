import type {
  InboxAccount,
  InboxAccountStore,
  InboxMembership,
  InboxRole,
} from '../ports/inbox-account-store.js';
import type { InboxAttachment, InboxAttachmentStore } from '../ports/inbox-attachment-store.js';
import {
  type DeliveryUpdate,
  type InboxMessage,
  type InboxMessageStore,
  STATUS_RANK,
} from '../ports/inbox-message-store.js';
import type { InboxNotificationStore } from '../ports/inbox-notification-store.js';
import type { InboxStores } from '../ports/inbox-stores.js';
import type { InboxThread, InboxThreadStore, ThreadCursor } from '../ports/inbox-thread-store.js';
import type { Logger } from '../ports/logger.js';
import type { MailEvent, MailEventStore } from '../ports/mail-event-store.js';
import { capWarning } from './cap-warning.js';
import type { MemoryStoresOptions } from './options.js';

// Every method below reads and writes without an `await` in between: atomic on one event loop.
// Rows are copied in and out so callers never hold the stored object. Lists filter and sort a
// whole Map: fine for development and tests.
// A real store: indexes for every lookup and list (account address, provider message id,
// thread keys, subject within a time range, the thread list's cursor order), unique keys that
// make `insert`/`record`/`create` one statement that may do nothing, a real lock for
// `lockSubject`, and finished notification claims deleted after a while.
const copy = <T>(v: T): T => structuredClone(v);

/** Newest first: larger time, then later arrival (`n`), then larger id. */
const newer = (a: { t: number; n: number; id: string }, b: { t: number; n: number; id: string }) =>
  b.t - a.t || b.n - a.n || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

export function memoryInboxAccountStore(): InboxAccountStore {
  const accounts = new Map<string, InboxAccount>();
  const byAddress = new Map<string, string>();
  /** accountId -> userId -> membership */
  const members = new Map<string, Map<string, InboxMembership>>();

  return {
    async create(account, ownerUserId) {
      if (byAddress.has(account.address)) return null;
      accounts.set(account.id, copy(account));
      byAddress.set(account.address, account.id);
      members.set(
        account.id,
        new Map([
          [
            ownerUserId,
            {
              accountId: account.id,
              userId: ownerUserId,
              role: 'owner',
              createdAt: account.createdAt,
              addedBy: null,
            },
          ],
        ]),
      );
      return copy(account);
    },
    async findById(id) {
      const a = accounts.get(id);
      return a ? copy(a) : null;
    },
    async findByAddress(address) {
      const id = byAddress.get(address);
      return id === undefined ? null : copy(accounts.get(id)!);
    },
    async listForUser(userId) {
      const out: Array<{ account: InboxAccount; role: InboxRole; addedBy: string | null }> = [];
      for (const [accountId, m] of members) {
        const mine = m.get(userId);
        if (mine)
          out.push({ account: copy(accounts.get(accountId)!), role: mine.role, addedBy: mine.addedBy });
      }
      return out.sort(
        (a, b) =>
          a.account.createdAt.getTime() - b.account.createdAt.getTime() ||
          (a.account.id < b.account.id ? -1 : 1),
      );
    },
    async roleOf(accountId, userId) {
      return members.get(accountId)?.get(userId)?.role ?? null;
    },
    async membershipOf(accountId, userId) {
      const m = members.get(accountId)?.get(userId);
      return m ? copy(m) : null;
    },
    async listMembers(accountId) {
      return [...(members.get(accountId)?.values() ?? [])].map(copy);
    },
    async dropGrantsOf(userId) {
      let dropped = 0;
      for (const m of members.values()) {
        const created = m.get(userId)?.addedBy === null;
        if (created) m.get(userId)!.role = 'owner';
        for (const [memberId, x] of m) {
          if (memberId !== userId && (created || x.addedBy === userId)) {
            m.delete(memberId);
            dropped++;
          }
        }
      }
      return dropped;
    },
    async setMember(accountId, userId, role, now, addedBy) {
      let m = members.get(accountId);
      if (!m) {
        m = new Map();
        members.set(accountId, m);
      }
      const existing = m.get(userId);
      if (existing) {
        if (existing.role === 'owner' && role === 'member') {
          const owners = [...m.values()].filter((x) => x.role === 'owner').length;
          if (owners <= 1) return 'last_owner';
        }
        existing.role = role;
        return { membership: copy(existing), created: false };
      }
      const membership: InboxMembership = { accountId, userId, role, createdAt: now, addedBy };
      m.set(userId, membership);
      return { membership: copy(membership), created: true };
    },
  };
}

export function memoryInboxThreadStore(): InboxThreadStore {
  const threads = new Map<string, InboxThread>();
  /** Per account: the last `activity` given (above every other of the account). */
  const activity = new Map<string, number>();
  const key = (t: ThreadCursor) => ({ t: t.lastMessageAt.getTime(), n: t.activity, id: t.id });

  return {
    async create(thread) {
      threads.set(thread.id, { ...copy(thread), activity: 0 });
    },
    async findById(id) {
      const t = threads.get(id);
      return t ? copy(t) : null;
    },
    async listByAccount(accountId, { after, limit }) {
      const cursor = after ? key(after) : null;
      return [...threads.values()]
        .filter((t) => t.accountId === accountId && t.messageCount > 0)
        .filter((t) => cursor === null || newer(cursor, key(t)) < 0)
        .sort((a, b) => newer(key(a), key(b)))
        .slice(0, limit)
        .map(copy);
    },
    async touch(id, at) {
      const t = threads.get(id);
      if (!t) return;
      t.messageCount += 1;
      if (at >= t.lastMessageAt) {
        t.lastMessageAt = new Date(at);
        t.activity = (activity.get(t.accountId) ?? 0) + 1;
        activity.set(t.accountId, t.activity);
      }
    },
    // One process: the inbound consumer serialises same-subject mails itself.
    async lockSubject() {},
    async deleteIfEmpty(id) {
      if (threads.get(id)?.messageCount === 0) threads.delete(id);
    },
  };
}

function applyUpdate(m: InboxMessage, u: DeliveryUpdate): void {
  if (u.kind === 'status') {
    if (STATUS_RANK[u.status] > STATUS_RANK[m.status]) m.status = u.status;
  } else if (u.kind === 'opened') {
    m.openCount += 1;
    if (m.openedAt === null || u.at < m.openedAt) m.openedAt = new Date(u.at);
  } else {
    m.clickCount += 1;
    if (m.clickedAt === null || u.at < m.clickedAt) m.clickedAt = new Date(u.at);
  }
}

export function memoryInboxMessageStore(): InboxMessageStore {
  const messages = new Map<string, InboxMessage>();
  /** `${accountId}\n${providerMessageId}` -> id */
  const byProvider = new Map<string, string>();
  const pk = (accountId: string, providerId: string) => `${accountId}\n${providerId}`;
  // `messages` iterates in insert order (never deleted from), so ties of `createdAt` keep their
  // arrival order: a stable sort for the list, the last of the newest for "newest".
  const byTime = (a: InboxMessage, b: InboxMessage) => a.createdAt.getTime() - b.createdAt.getTime();
  const newest = (filter: (m: InboxMessage) => boolean) => {
    let hit: InboxMessage | undefined;
    for (const m of messages.values()) if (filter(m) && (!hit || byTime(m, hit) >= 0)) hit = m;
    return hit ? copy(hit) : null;
  };

  return {
    async insert(message) {
      const existing = byProvider.get(pk(message.accountId, message.providerMessageId));
      if (existing !== undefined) return { message: copy(messages.get(existing)!), created: false };
      messages.set(message.id, copy(message));
      byProvider.set(pk(message.accountId, message.providerMessageId), message.id);
      return { message: copy(message), created: true };
    },
    async findById(id) {
      const m = messages.get(id);
      return m ? copy(m) : null;
    },
    async findByProviderId(accountId, providerMessageId) {
      const id = byProvider.get(pk(accountId, providerMessageId));
      return id === undefined ? null : copy(messages.get(id)!);
    },
    async listOutboundByProviderId(providerMessageId) {
      return [...messages.values()]
        .filter((m) => m.direction === 'outbound' && m.providerMessageId === providerMessageId)
        .map(copy);
    },
    async listByThread(threadId) {
      return [...messages.values()]
        .filter((m) => m.threadId === threadId)
        .sort(byTime)
        .map(copy);
    },
    async findOutboundByThreadKeys(accountId, keys) {
      const wanted = new Set(keys);
      return newest(
        (m) =>
          m.accountId === accountId && m.direction === 'outbound' && m.threadKeys.some((k) => wanted.has(k)),
      );
    },
    async findLatestBySubject(accountId, subjectKey, since, opts = {}) {
      const to = opts.outboundTo;
      return newest(
        (m) =>
          m.accountId === accountId &&
          m.subjectKey === subjectKey &&
          m.createdAt >= since &&
          (to === undefined || (m.direction === 'outbound' && m.recipients.includes(to))),
      );
    },
    async applyDelivery(id, update) {
      const m = messages.get(id);
      if (!m) return null;
      applyUpdate(m, update);
      return copy(m);
    },
    async markProcessed(id, at) {
      const m = messages.get(id);
      if (m && m.processedAt === null) m.processedAt = new Date(at);
    },
  };
}

export function memoryInboxAttachmentStore(): InboxAttachmentStore {
  const attachments = new Map<string, InboxAttachment>();
  const bySource = new Map<string, string>();
  const sk = (messageId: string, sourceKey: string) => `${messageId}\n${sourceKey}`;

  return {
    async insert(a) {
      const existing = bySource.get(sk(a.messageId, a.sourceKey));
      if (existing !== undefined) return copy(attachments.get(existing)!);
      attachments.set(a.id, copy(a));
      bySource.set(sk(a.messageId, a.sourceKey), a.id);
      return copy(a);
    },
    async findById(id) {
      const a = attachments.get(id);
      return a ? copy(a) : null;
    },
    async findBySource(messageId, sourceKey) {
      const id = bySource.get(sk(messageId, sourceKey));
      return id === undefined ? null : copy(attachments.get(id)!);
    },
    async listByMessages(messageIds) {
      const wanted = new Set(messageIds);
      return [...attachments.values()].filter((a) => wanted.has(a.messageId)).map(copy);
    },
  };
}

/** Mail events kept at most by default: about 14 MB at 0.7 KB each. */
export const DEFAULT_MAX_MAIL_EVENTS = 20_000;

/** Mail events by id, in the order they were recorded. At most `max` are kept: past it the
 *  oldest goes (one still waiting for its message too: that message, if it ever comes, then
 *  misses the update), with one warning per spell of dropping. */
export function memoryMailEventStore(opts: { max?: number; logger?: Logger } = {}): MailEventStore {
  const max = opts.max ?? DEFAULT_MAX_MAIL_EVENTS;
  const events = new Map<string, MailEvent>();
  const full = capWarning(opts.logger, 'mail_events', max, 'in-memory mail events full: dropping the oldest');

  const trim = () => {
    if (events.size <= max) return;
    full.dropping();
    for (const id of events.keys()) {
      if (events.size <= max) break;
      events.delete(id);
    }
  };

  return {
    async record(event) {
      const existing = events.get(event.id);
      if (existing) return { event: copy(existing), created: false };
      events.set(event.id, copy(event));
      trim();
      return { event: copy(event), created: true };
    },
    async findById(id) {
      const e = events.get(id);
      return e ? copy(e) : null;
    },
    async listPending(providerMessageId) {
      return [...events.values()]
        .filter((e) => e.providerMessageId === providerMessageId && e.appliedAt === null)
        .sort((a, b) => a.occurredAt.getTime() - b.occurredAt.getTime())
        .map(copy);
    },
    async markApplied(id, at) {
      const e = events.get(id);
      if (!e || e.appliedAt !== null) return false;
      e.appliedAt = new Date(at);
      return true;
    },
    async purge({ unmatchedBefore, appliedBefore }, limit = Number.POSITIVE_INFINITY) {
      let n = 0;
      for (const [id, e] of events) {
        if (n >= limit) break;
        const cut = e.appliedAt === null ? unmatchedBefore : appliedBefore;
        if (e.recordedAt.getTime() >= cut.getTime()) continue;
        events.delete(id);
        n += 1;
      }
      if (events.size < max) full.room();
      return n;
    },
  };
}

export function memoryInboxNotificationStore(): InboxNotificationStore {
  const claims = new Map<string, { leaseUntil: Date; done: boolean; holder: string | null }>();

  return {
    async claim(key, now, leaseUntil, holder) {
      const c = claims.get(key);
      if (c?.done) return 'completed';
      if (c && c.leaseUntil >= now) return { heldBy: c.holder };
      claims.set(key, { leaseUntil: new Date(leaseUntil), done: false, holder });
      return 'claimed';
    },
    async complete(key) {
      claims.set(key, { leaseUntil: new Date(0), done: true, holder: null });
    },
    async release(key) {
      if (claims.get(key)?.done === false) claims.delete(key);
    },
  };
}

export function memoryInboxStores(opts: Required<MemoryStoresOptions>): InboxStores {
  return {
    inboxAccounts: memoryInboxAccountStore(),
    inboxThreads: memoryInboxThreadStore(),
    inboxMessages: memoryInboxMessageStore(),
    inboxAttachments: memoryInboxAttachmentStore(),
    mailEvents: memoryMailEventStore({ max: opts.maxMailEvents, logger: opts.logger }),
    inboxNotifications: memoryInboxNotificationStore(),
  };
}
