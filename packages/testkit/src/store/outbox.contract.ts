import { randomUUID } from 'node:crypto';
import type { OutboxEvent, OutboxLease, OutboxStats, OutboxStore } from '@postern/core/ports';
import { beforeEach, describe, expect, it } from 'vitest';
import type { StoreSetup } from './setup.js';

const LEASE_MS = 30_000;

const leaseOf = (e: OutboxEvent): OutboxLease => ({ workerId: e.lockedBy!, attempt: e.attempts });
/** The lease of event `id` among claimed events (claims of equal due time come in any order). */
const leaseIn = (claimed: OutboxEvent[], id: string): OutboxLease =>
  leaseOf(claimed.find((e) => e.id === id)!);

/** The outbox port's contract (ports/outbox-store.ts): dedupe, claims that never hand one
 *  event to two workers, lease expiry, retry, dead, replay, purge. Each test uses its own
 *  event names and dedupe keys and counts stats as differences, so stores shared between
 *  tests (one database) pass too. */
export function outboxStoreContract(setup: StoreSetup): void {
  describe('outbox store', () => {
    let outbox: OutboxStore;
    let clock: Awaited<ReturnType<StoreSetup>>['clock'];
    let A: string;
    let B: string;
    let before: OutboxStats;
    const statsDelta = async (): Promise<OutboxStats> => {
      const s = await outbox.stats();
      return { pending: s.pending - before.pending, done: s.done - before.done, dead: s.dead - before.dead };
    };
    const deadOf = async (ids: string[]) =>
      (await outbox.listDead({ limit: 1000 })).map((e) => e.id).filter((id) => ids.includes(id));
    const now = () => clock.now();
    const claim = (workerId: string, limit = 10, names = [A]) =>
      outbox.claim({ names, limit, now: now(), leaseMs: LEASE_MS, workerId });
    const publish = (payload = '{}', name = A, dedupeKey?: string) =>
      outbox.publish({ name, payload, ...(dedupeKey === undefined ? {} : { dedupeKey }) }, now());

    beforeEach(async () => {
      const s = await setup();
      outbox = s.stores.outbox;
      clock = s.clock;
      A = `contract.outbox.a.${randomUUID()}`;
      B = `contract.outbox.b.${randomUUID()}`;
      before = await outbox.stats();
    });

    it('publish stores a pending event that get returns unchanged', async () => {
      const payload = '{"type":"email.delivered","data":{"x":"é \\u0000"}}';
      const r = await publish(payload, A, `k-${randomUUID()}`);
      expect(r.created).toBe(true);
      const e = await outbox.get(r.id);
      expect(e).toMatchObject({
        id: r.id,
        name: A,
        payload,
        status: 'pending',
        attempts: 0,
        lockedBy: null,
        lockedUntil: null,
        lastError: null,
        outcome: null,
        finishedAt: null,
      });
      expect(e!.createdAt.getTime()).toBe(now().getTime());
      expect(e!.availableAt.getTime()).toBe(now().getTime());
    });

    it('get returns null for an unknown id', async () => {
      expect(await outbox.get(randomUUID())).toBeNull();
    });

    it('publish without a dedupe key always inserts a new event', async () => {
      const a = await publish();
      const b = await publish();
      expect(a.id).not.toBe(b.id);
      expect(b.created).toBe(true);
    });

    it('publish with a known dedupe key inserts nothing and returns the first id', async () => {
      const key = `webhook-id:${randomUUID()}`;
      const first = await publish('{"n":1}', A, key);
      const again = await publish('{"n":2}', B, key);
      expect(again).toEqual({ id: first.id, created: false });
      expect((await outbox.get(first.id))!.payload).toBe('{"n":1}');
      expect(await statsDelta()).toEqual({ pending: 1, done: 0, dead: 0 });
    });

    it('concurrent publishes of one dedupe key: exactly one creates, all get its id', async () => {
      const key = `race-${randomUUID()}`;
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => publish(`{"i":${i}}`, A, key)));
      expect(results.filter((r) => r.created)).toHaveLength(1);
      expect(new Set(results.map((r) => r.id)).size).toBe(1);
      expect(await statsDelta()).toEqual({ pending: 1, done: 0, dead: 0 });
    });

    it('claim leases due events of the given names, oldest first, and counts the attempt', async () => {
      const first = await publish('1');
      clock.advance(1000);
      const second = await publish('2');
      const other = await publish('3', B);
      const claimed = await claim('w1');
      expect(claimed.map((e) => e.id)).toEqual([first.id, second.id]);
      for (const e of claimed) {
        expect(e.attempts).toBe(1);
        expect(e.lockedBy).toBe('w1');
        expect(e.lockedUntil!.getTime()).toBe(now().getTime() + LEASE_MS);
      }
      expect((await outbox.get(other.id))!.attempts).toBe(0);
      expect((await outbox.get(first.id))!.lockedBy).toBe('w1');
    });

    it('claim honours its limit and returns nothing for no names', async () => {
      for (let i = 0; i < 5; i++) await publish(String(i));
      expect(await claim('w1', 2)).toHaveLength(2);
      expect(await claim('w2', 10, [])).toEqual([]);
      expect(await claim('w2', 10)).toHaveLength(3);
    });

    it('events of names nobody claims stay pending', async () => {
      const r = await publish('x', B);
      expect(await claim('w1')).toEqual([]);
      clock.advance(24 * 3600_000);
      expect(await claim('w1')).toEqual([]);
      expect((await outbox.get(r.id))!.status).toBe('pending');
      expect(await claim('w1', 10, [B])).toHaveLength(1);
    });

    it('concurrent claimers never receive the same event', async () => {
      const ids = new Set<string>();
      for (let i = 0; i < 60; i++) ids.add((await publish(String(i))).id);
      const batches = await Promise.all(Array.from({ length: 12 }, (_, i) => claim(`w${i}`, 7)));
      const claimed = batches.flat().map((e) => e.id);
      expect(new Set(claimed).size).toBe(claimed.length);
      expect(claimed.length).toBe(60);
      expect(new Set(claimed)).toEqual(ids);
      expect(await claim('late')).toEqual([]);
    });

    it('a leased event is not claimed again until its lease expires, then with the next attempt', async () => {
      const r = await publish();
      const [held] = await claim('w1');
      clock.advance(LEASE_MS - 1);
      expect(await claim('w2')).toEqual([]);
      clock.advance(1);
      const [again] = await claim('w2');
      expect(again).toMatchObject({ id: r.id, attempts: 2, lockedBy: 'w2' });
      // The first worker's lease is gone: its late writes change nothing.
      expect(await outbox.complete(r.id, leaseOf(held!), null, now())).toBe(false);
      expect(await outbox.retry(r.id, leaseOf(held!), 'late', now())).toBe(false);
      expect(await outbox.kill(r.id, leaseOf(held!), 'late', now())).toBe(false);
      expect(await outbox.complete(r.id, leaseOf(again!), 'ok', now())).toBe(true);
    });

    it('complete finishes the event with its outcome and clears the lease', async () => {
      const r = await publish();
      const [e] = await claim('w1');
      clock.advance(500);
      expect(await outbox.complete(r.id, leaseOf(e!), 'no_account', now())).toBe(true);
      const done = await outbox.get(r.id);
      expect(done).toMatchObject({
        status: 'done',
        outcome: 'no_account',
        lockedBy: null,
        lockedUntil: null,
      });
      expect(done!.finishedAt!.getTime()).toBe(now().getTime());
      expect(await outbox.complete(r.id, leaseOf(e!), null, now())).toBe(false);
      clock.advance(LEASE_MS * 10);
      expect(await claim('w2')).toEqual([]);
    });

    it('retry makes the event due again at the given time with its error', async () => {
      const r = await publish();
      const [e] = await claim('w1');
      const at = new Date(now().getTime() + 5000);
      expect(await outbox.retry(r.id, leaseOf(e!), 'Error: boom', at)).toBe(true);
      expect(await outbox.get(r.id)).toMatchObject({
        status: 'pending',
        lastError: 'Error: boom',
        lockedBy: null,
      });
      clock.advance(4999);
      expect(await claim('w1')).toEqual([]);
      clock.advance(1);
      const [next] = await claim('w1');
      expect(next).toMatchObject({ id: r.id, attempts: 2 });
    });

    it('kill marks the event dead; listDead shows it, newest first', async () => {
      const a = await publish('a');
      const b = await publish('b');
      const claimed = await claim('w1');
      expect(await outbox.kill(a.id, leaseIn(claimed, a.id), 'Error: a', now())).toBe(true);
      clock.advance(1000);
      expect(await outbox.kill(b.id, leaseIn(claimed, b.id), 'Error: b', now())).toBe(true);
      expect(await outbox.get(a.id)).toMatchObject({ status: 'dead', lastError: 'Error: a', lockedBy: null });
      expect(await deadOf([a.id, b.id])).toEqual([b.id, a.id]);
      expect(await outbox.listDead({ limit: 1 })).toHaveLength(1);
      const all = await outbox.listDead({ limit: 1000 });
      expect((await outbox.listDead({ limit: 1000, offset: 1 })).map((e) => e.id)).toEqual(
        all.slice(1).map((e) => e.id),
      );
      clock.advance(LEASE_MS * 10);
      expect(await claim('w2')).toEqual([]);
      expect(await statsDelta()).toEqual({ pending: 0, done: 0, dead: 2 });
    });

    it('replay makes a dead event pending with fresh attempts; other events are refused', async () => {
      const r = await publish();
      const [e] = await claim('w1');
      await outbox.kill(r.id, leaseOf(e!), 'Error: gone', now());
      clock.advance(1000);
      expect(await outbox.replay(r.id, now())).toBe(true);
      expect(await outbox.get(r.id)).toMatchObject({ status: 'pending', attempts: 0, finishedAt: null });
      expect(await outbox.replay(r.id, now())).toBe(false);
      expect(await outbox.replay(randomUUID(), now())).toBe(false);
      const [again] = await claim('w2');
      expect(again).toMatchObject({ id: r.id, attempts: 1 });
      expect(await deadOf([r.id])).toEqual([]);
    });

    it('concurrent replays of one dead event: exactly one succeeds', async () => {
      const r = await publish();
      const [e] = await claim('w1');
      await outbox.kill(r.id, leaseOf(e!), 'Error', now());
      const results = await Promise.all(Array.from({ length: 10 }, () => outbox.replay(r.id, now())));
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it('stats counts events per status', async () => {
      const a = await publish('a');
      const b = await publish('b');
      await publish('c');
      const claimed = await claim('w1', 3);
      await outbox.complete(a.id, leaseIn(claimed, a.id), null, now());
      await outbox.kill(b.id, leaseIn(claimed, b.id), 'x', now());
      expect(await statsDelta()).toEqual({ pending: 1, done: 1, dead: 1 });
    });

    it('purge deletes done events finished before the cut-off with their dedupe keys, nothing else', async () => {
      const key = `p-${randomUUID()}`;
      const old = await publish('old', A, key);
      const dead = await publish('dead');
      const pending = await publish('pending', B);
      const claimed = await claim('w1', 2);
      await outbox.complete(old.id, leaseIn(claimed, old.id), null, now());
      await outbox.kill(dead.id, leaseIn(claimed, dead.id), 'x', now());
      clock.advance(1000);
      const fresh = await publish('fresh');
      const [ef] = await claim('w1');
      await outbox.complete(fresh.id, leaseOf(ef!), null, now());
      expect(await outbox.purge(new Date(now().getTime() - 500))).toBeGreaterThanOrEqual(1);
      expect(await outbox.get(old.id)).toBeNull();
      for (const id of [dead.id, pending.id, fresh.id]) expect(await outbox.get(id)).not.toBeNull();
      const reused = await publish('again', A, key);
      expect(reused.created).toBe(true);
      expect(reused.id).not.toBe(old.id);
    });

    it('purge with a limit deletes at most that many done events, the earliest finished first', async () => {
      const done: string[] = [];
      for (let i = 0; i < 5; i++) {
        const r = await publish(`batch-${i}`, A, `batch-${randomUUID()}`);
        const [e] = await claim('w1');
        await outbox.complete(r.id, leaseOf(e!), null, now());
        done.push(r.id);
        clock.advance(10);
      }
      const dead = await publish('dead');
      const [d] = await claim('w1');
      await outbox.kill(dead.id, leaseOf(d!), 'x', now());
      const pending = await publish('pending', B);
      clock.advance(10);
      const cut = now();
      expect(await outbox.purge(cut, 2)).toBe(2);
      for (const id of done.slice(0, 2)) expect(await outbox.get(id)).toBeNull();
      for (const id of done.slice(2)) expect(await outbox.get(id)).not.toBeNull();
      expect(await outbox.purge(cut, 2)).toBe(2);
      expect(await outbox.purge(cut, 2)).toBe(1);
      expect(await outbox.purge(cut, 2)).toBe(0);
      for (const id of done) expect(await outbox.get(id)).toBeNull();
      for (const id of [dead.id, pending.id]) expect(await outbox.get(id)).not.toBeNull();
    });

    it('events that outlive repeated purges stay whole: found by id, deduplicated, replayed and claimed', async () => {
      const key = `survivor-${randomUUID()}`;
      const dead = await publish('dead', A, key);
      const [d] = await claim('w1');
      await outbox.kill(dead.id, leaseOf(d!), 'x', now());
      const pending = await publish('pending', B);
      const ids = new Set([dead.id, pending.id]);
      let late: string | undefined;
      for (let round = 0; round < 3; round++) {
        const batch = [];
        for (let i = 0; i < 20; i++) batch.push(await publish(`r${round}-${i}`));
        for (const e of await claim('w1', 20)) await outbox.complete(e.id, leaseOf(e), null, now());
        clock.advance(1000);
        // Finished after the cut-off: it outlives this purge and goes with the next one.
        const next = await publish(`late-${round}`);
        const [l] = await claim('w1');
        await outbox.complete(next.id, leaseOf(l!), null, now());
        for (const r of [...batch, next]) ids.add(r.id);
        expect(await outbox.purge(new Date(now().getTime() - 500))).toBeGreaterThanOrEqual(batch.length);
        for (const r of batch) expect(await outbox.get(r.id)).toBeNull();
        if (late !== undefined) expect(await outbox.get(late)).toBeNull();
        expect(await outbox.get(next.id)).toMatchObject({ status: 'done', payload: `late-${round}` });
        late = next.id;
      }
      expect(ids.size).toBe(2 + 3 * 21);
      expect(await outbox.get(pending.id)).toMatchObject({ status: 'pending', payload: 'pending' });
      expect(await publish('again', A, key)).toEqual({ id: dead.id, created: false });
      expect(await outbox.replay(dead.id, now())).toBe(true);
      const claimed = await claim('w2', 10, [A, B]);
      expect(claimed.map((e) => e.id).sort()).toEqual([dead.id, pending.id].sort());
      expect(await statsDelta()).toEqual({ pending: 2, done: 1, dead: 0 });
    });
  });
}
