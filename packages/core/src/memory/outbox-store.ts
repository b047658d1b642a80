import { randomUUID } from 'node:crypto';
import type {
  ClaimOptions,
  NewOutboxEvent,
  OutboxEvent,
  OutboxLease,
  OutboxStats,
  OutboxStore,
  PublishResult,
} from '../ports/outbox-store.js';

const copy = (e: OutboxEvent): OutboxEvent => ({ ...e });

/** In-memory outbox. Every method reads and writes without an `await` in between, so each is
 *  atomic on the one event loop. Pending ids are queued apart so claims never scan finished
 *  events; the queue is an array (cheap on the publish path) that claims compact. */
export function memoryOutboxStore(): OutboxStore {
  const events = new Map<string, OutboxEvent>();
  const byKey = new Map<string, string>();
  /** Ids of events that may be pending (finished ones are dropped at the next claim). */
  let queue: string[] = [];
  const listeners = new Set<() => void>();

  const wake = () => {
    if (listeners.size === 0) return;
    queueMicrotask(() => {
      for (const l of listeners) l();
    });
  };

  /** The event when `lease` is its current claim. */
  const leased = (id: string, lease: OutboxLease): OutboxEvent | null => {
    const e = events.get(id);
    if (e?.status !== 'pending' || e.lockedBy !== lease.workerId || e.attempts !== lease.attempt) {
      return null;
    }
    return e;
  };

  const finish = (e: OutboxEvent, status: 'done' | 'dead', now: Date) => {
    e.status = status;
    e.finishedAt = now;
    e.lockedBy = null;
    e.lockedUntil = null;
  };

  return {
    async publish(input: NewOutboxEvent, now: Date): Promise<PublishResult> {
      if (input.dedupeKey !== undefined) {
        const existing = byKey.get(input.dedupeKey);
        if (existing !== undefined) return { id: existing, created: false };
      }
      const id = randomUUID();
      events.set(id, {
        id,
        name: input.name,
        payload: input.payload,
        dedupeKey: input.dedupeKey ?? null,
        status: 'pending',
        attempts: 0,
        availableAt: now,
        lockedBy: null,
        lockedUntil: null,
        lastError: null,
        outcome: null,
        createdAt: now,
        finishedAt: null,
      });
      if (input.dedupeKey !== undefined) byKey.set(input.dedupeKey, id);
      queue.push(id);
      wake();
      return { id, created: true };
    },

    async claim({ names, limit, now, leaseMs, workerId }: ClaimOptions): Promise<OutboxEvent[]> {
      if (limit <= 0 || names.length === 0) return [];
      const wanted = new Set(names);
      const t = now.getTime();
      const due: OutboxEvent[] = [];
      const kept = new Set<string>();
      for (const id of queue) {
        const e = events.get(id);
        if (e?.status !== 'pending' || kept.has(id)) continue;
        kept.add(id);
        if (!wanted.has(e.name) || e.availableAt.getTime() > t) continue;
        if (e.lockedUntil !== null && e.lockedUntil.getTime() > t) continue;
        due.push(e);
      }
      queue = [...kept];
      due.sort(
        (a, b) =>
          a.availableAt.getTime() - b.availableAt.getTime() || a.createdAt.getTime() - b.createdAt.getTime(),
      );
      return due.slice(0, limit).map((e) => {
        e.attempts += 1;
        e.lockedBy = workerId;
        e.lockedUntil = new Date(t + leaseMs);
        return copy(e);
      });
    },

    async complete(id, lease, outcome, now) {
      const e = leased(id, lease);
      if (!e) return false;
      e.outcome = outcome;
      finish(e, 'done', now);
      return true;
    },

    async retry(id, lease, error, availableAt) {
      const e = leased(id, lease);
      if (!e) return false;
      e.lastError = error;
      e.availableAt = availableAt;
      e.lockedBy = null;
      e.lockedUntil = null;
      return true;
    },

    async kill(id, lease, error, now) {
      const e = leased(id, lease);
      if (!e) return false;
      e.lastError = error;
      finish(e, 'dead', now);
      return true;
    },

    async get(id) {
      const e = events.get(id);
      return e ? copy(e) : null;
    },

    async listDead({ limit, offset = 0 }) {
      return [...events.values()]
        .filter((e) => e.status === 'dead')
        .sort((a, b) => b.finishedAt!.getTime() - a.finishedAt!.getTime())
        .slice(offset, offset + limit)
        .map(copy);
    },

    async replay(id, now) {
      const e = events.get(id);
      if (e?.status !== 'dead') return false;
      e.status = 'pending';
      e.attempts = 0;
      e.availableAt = now;
      e.finishedAt = null;
      queue.push(id);
      wake();
      return true;
    },

    async stats(): Promise<OutboxStats> {
      const s: OutboxStats = { pending: 0, done: 0, dead: 0 };
      for (const e of events.values()) s[e.status] += 1;
      return s;
    },

    async purge(before) {
      let n = 0;
      for (const e of events.values()) {
        if (e.status !== 'done' || e.finishedAt!.getTime() >= before.getTime()) continue;
        events.delete(e.id);
        if (e.dedupeKey !== null) byKey.delete(e.dedupeKey);
        n += 1;
      }
      return n;
    },

    subscribeWake(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
