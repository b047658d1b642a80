import { createPostern, type Stores } from '@postern/core';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { postgresStores } from '../src/stores.js';
import { NO_SERVER_REASON, openTestDatabase, serverUrl, type TestDatabase } from './helpers/test-db.js';

// Postgres-specific outbox behaviour: races across pool connections, leases, LISTEN/NOTIFY.
// The port's semantics are checked by the shared store contract.

let db: TestDatabase;
const server = await serverUrl();
const skipNote = server ? '' : ` (skipped: ${NO_SERVER_REASON})`;
const t0 = new Date('2030-01-01T00:00:00Z');
const at = (ms: number) => new Date(t0.getTime() + ms);
const NAMES = ['e'];

beforeAll(async () => {
  db = await openTestDatabase('outbox', { max: 10 });
});
afterAll(() => db?.close());
beforeEach(() => db.reset());

const stores = (opts: { listen?: boolean; schema?: string; pool?: pg.Pool } = {}): Stores =>
  postgresStores({
    pool: opts.pool ?? db.pool,
    schema: opts.schema ?? db.schema,
    listen: opts.listen ?? false,
  });

describe('outbox on Postgres', () => {
  it('publishes one event per dedupe key when many connections publish it at once', async () => {
    const s = stores();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        s.outbox.publish({ name: 'e', payload: `p${i}`, dedupeKey: 'k1' }, t0),
      ),
    );
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.id)).size).toBe(1);
    expect(await s.outbox.stats()).toEqual({ pending: 1, done: 0, dead: 0 });
  });

  it('never hands one event to two claimers racing on several connections', async () => {
    const s = stores();
    for (let i = 0; i < 120; i++) await s.outbox.publish({ name: 'e', payload: String(i) }, t0);
    const seen: string[] = [];
    await Promise.all(
      Array.from({ length: 6 }, async (_, w) => {
        for (;;) {
          const batch = await s.outbox.claim({
            names: NAMES,
            limit: 7,
            now: t0,
            leaseMs: 60_000,
            workerId: `w${w}`,
          });
          if (batch.length === 0) return;
          seen.push(...batch.map((e) => e.id));
        }
      }),
    );
    expect(seen).toHaveLength(120);
    expect(new Set(seen).size).toBe(120);
  });

  it('claims oldest due first and leaves other names and future events alone', async () => {
    const s = stores();
    const late = await s.outbox.publish({ name: 'e', payload: 'late' }, at(5000));
    const first = await s.outbox.publish({ name: 'e', payload: 'first' }, t0);
    const second = await s.outbox.publish({ name: 'e', payload: 'second' }, t0);
    await s.outbox.publish({ name: 'other', payload: 'x' }, t0);
    const got = await s.outbox.claim({
      names: NAMES,
      limit: 10,
      now: at(1000),
      leaseMs: 60_000,
      workerId: 'w',
    });
    expect(got.map((e) => e.id)).toEqual([first.id, second.id]);
    expect(got[0]).toMatchObject({ attempts: 1, lockedBy: 'w', lockedUntil: at(61_000) });
    const later = await s.outbox.claim({
      names: NAMES,
      limit: 10,
      now: at(5000),
      leaseMs: 1000,
      workerId: 'w',
    });
    expect(later.map((e) => e.id)).toEqual([late.id]);
  });

  it('re-claims an event whose worker died once its lease expires, and fences the dead worker out', async () => {
    const s = stores();
    const { id } = await s.outbox.publish({ name: 'e', payload: 'p' }, t0);
    const [a] = await s.outbox.claim({ names: NAMES, limit: 1, now: t0, leaseMs: 30_000, workerId: 'dies' });
    expect(a?.id).toBe(id);
    expect(
      await s.outbox.claim({ names: NAMES, limit: 1, now: at(29_999), leaseMs: 30_000, workerId: 'b' }),
    ).toEqual([]);
    const [b] = await s.outbox.claim({
      names: NAMES,
      limit: 1,
      now: at(30_000),
      leaseMs: 30_000,
      workerId: 'b',
    });
    expect(b).toMatchObject({ id, attempts: 2, lockedBy: 'b' });
    expect(await s.outbox.complete(id, { workerId: 'dies', attempt: 1 }, null, at(30_001))).toBe(false);
    expect(await s.outbox.complete(id, { workerId: 'b', attempt: 2 }, 'ok', at(30_002))).toBe(true);
    expect(await s.outbox.get(id)).toMatchObject({
      status: 'done',
      outcome: 'ok',
      lockedBy: null,
      finishedAt: at(30_002),
    });
  });

  it('retries with a later due time, marks dead, lists dead newest first, and replays', async () => {
    const s = stores();
    const one = await s.outbox.publish({ name: 'e', payload: '1' }, t0);
    const two = await s.outbox.publish({ name: 'e', payload: '2' }, t0);
    const claimed = await s.outbox.claim({ names: NAMES, limit: 2, now: t0, leaseMs: 60_000, workerId: 'w' });
    expect(claimed).toHaveLength(2);
    expect(await s.outbox.retry(one.id, { workerId: 'w', attempt: 1 }, 'flaky', at(10_000))).toBe(true);
    expect(
      await s.outbox.claim({ names: NAMES, limit: 5, now: at(9_999), leaseMs: 1000, workerId: 'w' }),
    ).toEqual([]);
    expect(await s.outbox.kill(two.id, { workerId: 'w', attempt: 1 }, 'bad', at(1))).toBe(true);
    const [again] = await s.outbox.claim({
      names: NAMES,
      limit: 5,
      now: at(10_000),
      leaseMs: 1000,
      workerId: 'w',
    });
    expect(again).toMatchObject({ id: one.id, attempts: 2, lastError: 'flaky' });
    expect(await s.outbox.kill(one.id, { workerId: 'w', attempt: 2 }, 'gave up', at(10_001))).toBe(true);
    expect((await s.outbox.listDead({ limit: 10 })).map((e) => e.id)).toEqual([one.id, two.id]);
    expect(await s.outbox.replay(two.id, at(20_000))).toBe(true);
    expect(await s.outbox.replay(two.id, at(20_000))).toBe(false);
    expect(await s.outbox.get(two.id)).toMatchObject({ status: 'pending', attempts: 0, lastError: 'bad' });
    expect(await s.outbox.stats()).toEqual({ pending: 1, done: 0, dead: 1 });
  });

  it('purges finished events with their dedupe keys, never pending or dead ones', async () => {
    const s = stores();
    const done = await s.outbox.publish({ name: 'e', payload: 'p', dedupeKey: 'k' }, t0);
    await s.outbox.publish({ name: 'e', payload: 'q' }, t0);
    await s.outbox.claim({ names: NAMES, limit: 1, now: t0, leaseMs: 1000, workerId: 'w' });
    await s.outbox.complete(done.id, { workerId: 'w', attempt: 1 }, null, at(1));
    expect(await s.outbox.purge(at(1))).toBe(0);
    expect(await s.outbox.purge(at(2))).toBe(1);
    expect(await s.outbox.get(done.id)).toBeNull();
    expect((await s.outbox.publish({ name: 'e', payload: 'p', dedupeKey: 'k' }, at(3))).created).toBe(true);
  });

  it('publishes an event inside a transaction only when it commits', async () => {
    const s = stores();
    await expect(
      s.transaction(async (tx) => {
        await tx.outbox.publish({ name: 'e', payload: 'p', dedupeKey: 'tx' }, t0);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await s.outbox.stats()).toEqual({ pending: 0, done: 0, dead: 0 });
    expect((await s.outbox.publish({ name: 'e', payload: 'p', dedupeKey: 'tx' }, t0)).created).toBe(true);
  });
});

describe('outbox workers on Postgres', () => {
  it('drain a backlog through started workers while every delivery slot stays busy', async () => {
    const stores = postgresStores({ pool: db.pool, schema: db.schema, listen: server !== null });
    const ph = createPostern({
      issuer: 'https://w.test',
      audience: 'w',
      stores,
      outbox: { concurrency: 2, pollIntervalMs: 20 },
    });
    let done = 0;
    ph.outbox.subscribe('slow', async () => {
      // Slower than the poll interval: timer turns find both slots busy.
      await new Promise((r) => setTimeout(r, 60));
      done += 1;
    });
    for (let i = 0; i < 12; i++) await ph.outbox.publish({ name: 'slow', payload: String(i) });
    ph.outbox.start();
    const deadline = Date.now() + 10_000;
    while (done < 12 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await ph.close();
    expect(done).toBe(12);
    expect(await stores.outbox.stats()).toEqual({ pending: 0, done: 12, dead: 0 });
  });
});

describe('outbox wake-ups (LISTEN/NOTIFY)', () => {
  const waitFor = (hit: () => boolean, ms: number) =>
    new Promise<boolean>((resolve) => {
      const start = Date.now();
      const tick = () =>
        hit() ? resolve(true) : Date.now() - start > ms ? resolve(false) : setTimeout(tick, 10);
      tick();
    });

  it.skipIf(!server)(
    `wakes a subscriber when another process-like pool publishes or replays${skipNote}`,
    async () => {
      const listener = stores({ listen: true });
      const otherPool = new pg.Pool({ connectionString: db.url!, max: 2 });
      const publisher = stores({ pool: otherPool });
      let wakes = 0;
      const stop = listener.outbox.subscribeWake!(() => {
        wakes += 1;
      });
      try {
        // The LISTEN connection opens lazily; give it a moment before publishing.
        await new Promise((r) => setTimeout(r, 200));
        await publisher.outbox.publish({ name: 'e', payload: 'p' }, t0);
        expect(await waitFor(() => wakes >= 1, 3000)).toBe(true);
        const [e] = await publisher.outbox.claim({
          names: NAMES,
          limit: 1,
          now: t0,
          leaseMs: 1,
          workerId: 'w',
        });
        await publisher.outbox.kill(e!.id, { workerId: 'w', attempt: 1 }, 'x', t0);
        await new Promise((r) => setTimeout(r, 200));
        const before = wakes;
        await publisher.outbox.replay(e!.id, t0);
        expect(await waitFor(() => wakes > before, 3000)).toBe(true);
      } finally {
        stop();
        await listener.close?.();
        await otherPool.end();
      }
    },
  );

  it.skipIf(!server)(
    `does not wake subscribers of another schema, nor before a commit${skipNote}`,
    async () => {
      const other = await openTestDatabase('outbox_other');
      const listener = stores({ listen: true });
      let wakes = 0;
      const stop = listener.outbox.subscribeWake!(() => {
        wakes += 1;
      });
      try {
        await new Promise((r) => setTimeout(r, 200));
        await postgresStores({ pool: other.pool, schema: other.schema, listen: false }).outbox.publish(
          { name: 'e', payload: 'p' },
          t0,
        );
        await stores().transaction(async (tx) => {
          await tx.outbox.publish({ name: 'e', payload: 'p' }, t0);
          await new Promise((r) => setTimeout(r, 300));
          expect(wakes).toBe(0);
        });
        expect(await waitFor(() => wakes === 1, 3000)).toBe(true);
      } finally {
        stop();
        await listener.close?.();
        await other.close();
      }
    },
  );

  it.skipIf(!server)(
    `releases a dead worker's leases at once instead of after the visibility timeout${skipNote}`,
    async () => {
      const app = `ph_presence_${db.schema}`;
      const workerPool = new pg.Pool({ connectionString: db.url!, max: 3, application_name: app });
      workerPool.on('error', () => {});
      const worker = stores({ pool: workerPool, listen: true });
      const other = stores();
      const stop = worker.outbox.subscribeWake!(() => {});
      try {
        // The worker holds its presence lock once its LISTEN connection is up.
        const held = async () =>
          (
            await db.pool.query(
              `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND classid = $1`,
              [0x67617465],
            )
          ).rows[0].n > 0;
        for (let i = 0; i < 100 && !(await held()); i++) await new Promise((r) => setTimeout(r, 20));
        const { id } = await other.outbox.publish({ name: 'e', payload: 'p' }, t0);
        const [mine] = await worker.outbox.claim({
          names: NAMES,
          limit: 1,
          now: t0,
          leaseMs: 600_000,
          workerId: 'w1',
        });
        expect(mine?.id).toBe(id);
        await new Promise((r) => setTimeout(r, 1100));
        // Alive: its lease holds.
        expect(
          await other.outbox.claim({ names: NAMES, limit: 1, now: at(1000), leaseMs: 1000, workerId: 'w2' }),
        ).toEqual([]);
        // The worker process dies: every connection it had is gone, its presence lock with them.
        await worker.close?.();
        await db.pool.query(
          'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
          [app],
        );
        await new Promise((r) => setTimeout(r, 1100));
        const [again] = await other.outbox.claim({
          names: NAMES,
          limit: 1,
          now: at(2000),
          leaseMs: 1000,
          workerId: 'w2',
        });
        expect(again).toMatchObject({ id, attempts: 2, lockedBy: 'w2' });
        // The dead worker's late write is fenced off.
        expect(await worker.outbox.complete(id, { workerId: 'w1', attempt: 1 }, null, at(3000))).toBe(false);
      } finally {
        stop();
        await workerPool.end();
      }
    },
  );
});
