import { randomUUID } from 'node:crypto';
import type { Logger } from '../ports/logger.js';
import type {
  ClaimOptions,
  NewOutboxEvent,
  OutboxEvent,
  OutboxLease,
  OutboxStats,
  OutboxStore,
  PublishResult,
} from '../ports/outbox-store.js';
import { capWarning } from './cap-warning.js';

/** Finished events kept at most by default: about 20 MB at 1 KB per delivery event. */
export const DEFAULT_MAX_FINISHED_EVENTS = 20_000;

const copy = (e: OutboxEvent): OutboxEvent => ({ ...e });

export interface MemoryOutboxOptions {
  /** Finished (`done` or `dead`) events kept at most; past it the oldest finished is dropped
   *  with its dedupe key. Pending events are never dropped. */
  maxFinished?: number;
  /** Where the warning goes when the cap starts to drop events. */
  logger?: Logger;
}

/** In-memory outbox: events by id in a Map, dedupe keys in another, and the ids of pending
 *  and of finished events in Sets, so claims read only pending events and the cap drops the
 *  oldest finished first. Every method reads and writes without an `await` in between, so each
 *  is atomic on the one event loop.
 *  A real store keeps every event (no cap: the retention purge removes finished ones), makes
 *  the dedupe key a unique index so publishing is one insert that may do nothing, and claims
 *  with row locks that skip rows another worker holds, so several processes share the work. */
export function memoryOutboxStore(opts: MemoryOutboxOptions = {}): OutboxStore {
  const maxFinished = opts.maxFinished ?? DEFAULT_MAX_FINISHED_EVENTS;
  const events = new Map<string, OutboxEvent>();
  /** Dedupe key -> id of the event that holds it. */
  const byKey = new Map<string, string>();
  /** Pending events due from when they were published or replayed, in that order: as
   *  `availableAt` is the clock at that moment, the order they fell due in. A claim reads from
   *  the front and stops once it has enough, so a backlog does not make each claim read it all
   *  (a full scan per claim would slow a worker most when it is furthest behind). */
  const ready = new Set<string>();
  /** Pending events a retry put off: few, and read whole by every claim. */
  const delayed = new Set<string>();
  /** Ids of done and dead events, in the order they finished: the oldest is dropped first. */
  const finished = new Set<string>();
  const full = capWarning(
    opts.logger,
    'outbox',
    maxFinished,
    'in-memory outbox full: dropping the oldest finished events and their dedupe keys',
  );
  const listeners = new Set<() => void>();

  const wake = () => {
    if (listeners.size === 0) return;
    queueMicrotask(() => {
      for (const l of listeners) l();
    });
  };

  const remove = (id: string) => {
    const e = events.get(id);
    if (!e) return;
    events.delete(id);
    finished.delete(id);
    if (e.dedupeKey !== null && byKey.get(e.dedupeKey) === id) byKey.delete(e.dedupeKey);
  };

  /** Keeps the finished events within the cap, oldest first. */
  const trim = () => {
    if (finished.size <= maxFinished) return;
    full.dropping();
    for (const id of finished) {
      if (finished.size <= maxFinished) break;
      remove(id);
    }
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
    ready.delete(e.id);
    delayed.delete(e.id);
    finished.add(e.id);
    trim();
  };

  return {
    async publish(input: NewOutboxEvent, now: Date): Promise<PublishResult> {
      if (input.dedupeKey !== undefined) {
        const standing = byKey.get(input.dedupeKey);
        if (standing !== undefined) return { id: standing, created: false };
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
      ready.add(id);
      wake();
      return { id, created: true };
    },

    async claim({ names, limit, now, leaseMs, workerId }: ClaimOptions): Promise<OutboxEvent[]> {
      if (limit <= 0 || names.length === 0) return [];
      const wanted = new Set(names);
      const t = now.getTime();
      const isDue = (e: OutboxEvent) =>
        wanted.has(e.name) &&
        e.availableAt.getTime() <= t &&
        (e.lockedUntil === null || e.lockedUntil.getTime() <= t);
      const due: OutboxEvent[] = [];
      for (const id of ready) {
        const e = events.get(id)!;
        if (isDue(e) && due.push(e) === limit) break;
      }
      for (const id of delayed) {
        const e = events.get(id)!;
        if (isDue(e)) due.push(e);
      }
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
      ready.delete(id);
      delayed.add(id);
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
      return [...finished]
        .map((id) => events.get(id)!)
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
      finished.delete(id);
      ready.add(id);
      wake();
      return true;
    },

    async stats(): Promise<OutboxStats> {
      const s: OutboxStats = { pending: ready.size + delayed.size, done: 0, dead: 0 };
      for (const id of finished) s[events.get(id)!.status as 'done' | 'dead'] += 1;
      return s;
    },

    async purge(before, limit = Number.POSITIVE_INFINITY) {
      let n = 0;
      for (const id of finished) {
        if (n >= limit) break;
        const e = events.get(id)!;
        if (e.status !== 'done' || e.finishedAt!.getTime() >= before.getTime()) continue;
        remove(id);
        n += 1;
      }
      if (finished.size < maxFinished) full.room();
      return n;
    },

    subscribeWake(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
