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
import { dedupeIndex } from './dedupe-index.js';

const copy = (e: OutboxEvent): OutboxEvent => ({ ...e });

/** Ids look like Postgres's (UUID v4 shape) but carry the event's slot: a random 24-hex-digit
 *  prefix per store and a 12-hex-digit sequence. Finding an event by id is then an array index,
 *  not a lookup in a hash map of every event: at 100,000 events a Map insert costs about as much
 *  as the whole signature check, and the intake path would pay it on every webhook. */
function idScheme() {
  const prefix = randomUUID().slice(0, 24);
  const SEQ_DIGITS = 12;
  return {
    idOf: (seq: number) => prefix + seq.toString(16).padStart(SEQ_DIGITS, '0'),
    /** The sequence an id of this store names; -1 for any other string. */
    seqOf: (id: string) => {
      if (id.length !== 36 || !id.startsWith(prefix)) return -1;
      const tail = id.slice(24);
      return /^[0-9a-f]{12}$/.test(tail) ? Number.parseInt(tail, 16) : -1;
    },
  };
}

/** In-memory outbox. Every method reads and writes without an `await` in between, so each is
 *  atomic on the one event loop. Events sit in an array in publish order (`slots[seq - base]`,
 *  a hole once purged); pending ones are also queued apart so claims never scan finished events.
 *  The queue is an array (cheap on the publish path) that claims compact. */
export function memoryOutboxStore(): OutboxStore {
  const { idOf, seqOf } = idScheme();
  let slots: (OutboxEvent | undefined)[] = [];
  /** Sequence of `slots[0]`. */
  let base = 0;
  /** Events older than `base` that outlived a compaction (dead, pending, or not yet purgeable). */
  const older = new Map<number, OutboxEvent>();
  /** Sequences of events that may be pending (finished ones are dropped at the next claim). */
  let queue: number[] = [];
  const listeners = new Set<() => void>();

  /** The event with sequence `seq`; undefined for a purged one or -1 (an id of no event here). */
  const at = (seq: number): OutboxEvent | undefined =>
    seq < 0 ? undefined : seq < base ? older.get(seq) : slots[seq - base];
  const find = (id: string): OutboxEvent | undefined => at(seqOf(id));
  const byKey = dedupeIndex((seq) => at(seq)?.dedupeKey ?? null);
  /** Every stored event, in publish order. */
  const present = () => [...older.values(), ...slots.filter((e): e is OutboxEvent => e !== undefined)];

  const wake = () => {
    if (listeners.size === 0) return;
    queueMicrotask(() => {
      for (const l of listeners) l();
    });
  };

  /** The event when `lease` is its current claim. */
  const leased = (id: string, lease: OutboxLease): OutboxEvent | null => {
    const e = find(id);
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
      const seq = base + slots.length;
      if (input.dedupeKey !== undefined) {
        const standing = byKey.getOrAdd(input.dedupeKey, seq);
        if (standing !== seq) return { id: idOf(standing), created: false };
      }
      const id = idOf(seq);
      slots.push({
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
      queue.push(seq);
      wake();
      return { id, created: true };
    },

    async claim({ names, limit, now, leaseMs, workerId }: ClaimOptions): Promise<OutboxEvent[]> {
      if (limit <= 0 || names.length === 0) return [];
      const wanted = new Set(names);
      const t = now.getTime();
      const due: OutboxEvent[] = [];
      const kept = new Set<number>();
      for (const seq of queue) {
        const e = at(seq);
        if (e?.status !== 'pending' || kept.has(seq)) continue;
        kept.add(seq);
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
      const e = find(id);
      return e ? copy(e) : null;
    },

    async listDead({ limit, offset = 0 }) {
      return present()
        .filter((e) => e.status === 'dead')
        .sort((a, b) => b.finishedAt!.getTime() - a.finishedAt!.getTime())
        .slice(offset, offset + limit)
        .map(copy);
    },

    async replay(id, now) {
      const seq = seqOf(id);
      const e = at(seq);
      if (e?.status !== 'dead') return false;
      e.status = 'pending';
      e.attempts = 0;
      e.availableAt = now;
      e.finishedAt = null;
      queue.push(seq);
      wake();
      return true;
    },

    async stats(): Promise<OutboxStats> {
      const s: OutboxStats = { pending: 0, done: 0, dead: 0 };
      for (const e of older.values()) s[e.status] += 1;
      for (const e of slots) if (e !== undefined) s[e.status] += 1;
      return s;
    },

    async purge(before) {
      let n = 0;
      const purgeable = (e: OutboxEvent) => e.status === 'done' && e.finishedAt!.getTime() < before.getTime();
      const drop = (e: OutboxEvent, seq: number) => {
        if (e.dedupeKey !== null) byKey.delete(e.dedupeKey, seq);
        n += 1;
      };
      for (const [seq, e] of older) {
        if (!purgeable(e)) continue;
        older.delete(seq);
        drop(e, seq);
      }
      let live = 0;
      for (let i = 0; i < slots.length; i++) {
        const e = slots[i];
        if (e === undefined) continue;
        if (!purgeable(e)) {
          live += 1;
          continue;
        }
        slots[i] = undefined;
        drop(e, base + i);
      }
      // Once most slots are holes, the few survivors move to `older` and the array starts
      // afresh, so memory follows the live events even when an old dead one never goes.
      if (live * 2 <= slots.length) {
        for (let i = 0; i < slots.length; i++) if (slots[i] !== undefined) older.set(base + i, slots[i]!);
        base += slots.length;
        slots = [];
      }
      return n;
    },

    subscribeWake(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
