import type { DeliveredEvent, OutboxOptions, Stores } from '@postern/core';
import { ConfigError, createPostern, RetryLater, StoreError } from '@postern/core';
import { memoryStores } from '@postern/core/memory';
import { type LogLine, recordingLogger, TestClock } from '@postern/testkit';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { backoffDelay } from '../../src/outbox/backoff.js';
import { createOutbox, type Outbox } from '../../src/outbox/index.js';

const SECOND = 1000;
const HOUR = 3600 * SECOND;
const NAME = 'test.event';

interface Env {
  outbox: Outbox;
  clock: TestClock;
  stores: Stores;
  logs: LogLine[];
}

const started: Outbox[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((o) => o.stop()));
});

function setup(options: OutboxOptions = {}): Env {
  const clock = new TestClock();
  const stores = memoryStores({ clock });
  const { logger, lines: logs } = recordingLogger();
  const ctx = { options: { issuer: 'i', audience: 'a', outbox: options }, stores, clock, logger };
  const outbox = createOutbox(ctx);
  started.push(outbox);
  return { outbox, clock, stores, logs };
}

/** A promise with its resolve function, to hold a consumer until the test lets it go. */
function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe('outbox dispatcher', () => {
  it('delivers a published event once to the consumer subscribed to its name', async () => {
    const { outbox, clock } = setup();
    const seen: DeliveredEvent[] = [];
    outbox.subscribe(NAME, async (e) => {
      seen.push(e);
    });
    const id = await outbox.publish({ name: NAME, payload: '{"a":1}' });
    const before = Date.now();
    expect(await outbox.drain()).toBe(1);
    expect(seen).toEqual([
      {
        id,
        name: NAME,
        payload: '{"a":1}',
        attempt: 1,
        maxAttempts: 10,
        createdAt: clock.now(),
        leaseEndsAt: expect.any(Number),
        signal: expect.any(AbortSignal),
      },
    ]);
    // The lease's wall-clock end: the default visibility timeout (5 min) from the claim.
    expect(seen[0]!.leaseEndsAt! - before).toBeGreaterThanOrEqual(5 * 60 * SECOND);
    expect(seen[0]!.leaseEndsAt! - Date.now()).toBeLessThanOrEqual(5 * 60 * SECOND);
    expect(seen[0]!.signal!.aborted).toBe(false);
    expect(await outbox.get(id)).toMatchObject({ status: 'done', outcome: null });
    expect(await outbox.drain()).toBe(0);
  });

  it('finishes an event with the outcome its consumer returns', async () => {
    const { outbox } = setup();
    outbox.subscribe(NAME, async () => ({ outcome: 'no_account' }));
    const id = await outbox.publish({ name: NAME, payload: '{}' });
    await outbox.drain();
    expect(await outbox.get(id)).toMatchObject({ status: 'done', outcome: 'no_account', attempts: 1 });
  });

  it('returns the first id for a repeated dedupe key and delivers once', async () => {
    const { outbox } = setup();
    let calls = 0;
    outbox.subscribe(NAME, async () => {
      calls += 1;
    });
    const a = await outbox.publishIfNew({ name: NAME, payload: '1', dedupeKey: 'k' });
    const b = await outbox.publishIfNew({ name: NAME, payload: '2', dedupeKey: 'k' });
    expect(b).toEqual({ id: a.id, created: false });
    expect(await outbox.publish({ name: NAME, payload: '3', dedupeKey: 'k' })).toBe(a.id);
    await outbox.drain();
    expect(calls).toBe(1);
  });

  it('keeps events nobody consumes pending and delivers them once a consumer subscribes', async () => {
    const { outbox } = setup();
    const id = await outbox.publish({ name: 'nobody.listens', payload: '{}' });
    outbox.subscribe(NAME, async () => {});
    expect(await outbox.drain()).toBe(0);
    expect(await outbox.get(id)).toMatchObject({ status: 'pending', attempts: 0 });
    let got = '';
    outbox.subscribe('nobody.listens', async (e) => {
      got = e.id;
    });
    await outbox.drain();
    expect(got).toBe(id);
  });

  it('refuses a second consumer for one name', () => {
    const { outbox } = setup();
    outbox.subscribe(NAME, async () => {});
    expect(() => outbox.subscribe(NAME, async () => {})).toThrow(ConfigError);
  });

  it('retries a failing consumer only once its backoff has passed on the clock', async () => {
    const { outbox, clock, logs } = setup({ baseDelayMs: 10 * SECOND });
    const attempts: number[] = [];
    outbox.subscribe(NAME, async (e) => {
      attempts.push(e.attempt);
      if (e.attempt < 3) throw new Error(`boom ${e.attempt}`);
    });
    const id = await outbox.publish({ name: NAME, payload: '{}' });
    await outbox.drain();
    const failed = await outbox.get(id);
    expect(failed).toMatchObject({ status: 'pending', attempts: 1, lastError: 'Error: boom 1' });
    const wait = failed!.availableAt.getTime() - clock.now().getTime();
    expect(wait).toBeGreaterThanOrEqual(0);
    expect(wait).toBeLessThanOrEqual(10 * SECOND);
    if (wait > 0) {
      clock.advance(wait - 1);
      await outbox.drain();
      expect(attempts).toEqual([1]);
    }
    clock.advance(20 * SECOND);
    await outbox.drain();
    clock.advance(20 * SECOND);
    await outbox.drain();
    expect(attempts).toEqual([1, 2, 3]);
    expect(await outbox.get(id)).toMatchObject({ status: 'done', attempts: 3 });
    expect(logs.filter((l) => l.fields.event === 'outbox_retry')).toHaveLength(2);
  });

  it('marks an event dead after the last attempt and replays it with fresh attempts', async () => {
    const { outbox, clock, logs } = setup({ maxAttempts: 3 });
    let fail = true;
    const attempts: number[] = [];
    outbox.subscribe(NAME, async (e) => {
      attempts.push(e.attempt);
      if (fail) throw new TypeError('provider down');
    });
    const id = await outbox.publish({ name: NAME, payload: '{}' });
    for (let i = 0; i < 5; i++) {
      await outbox.drain();
      clock.advance(HOUR);
    }
    expect(attempts).toEqual([1, 2, 3]);
    expect(await outbox.get(id)).toMatchObject({
      status: 'dead',
      attempts: 3,
      lastError: 'TypeError: provider down',
    });
    expect((await outbox.listDead()).map((e) => e.id)).toEqual([id]);
    expect(logs.find((l) => l.fields.event === 'outbox_dead')).toMatchObject({ level: 'error' });

    fail = false;
    expect(await outbox.replay(id)).toBe(true);
    expect(await outbox.replay(id)).toBe(false);
    await outbox.drain();
    expect(attempts).toEqual([1, 2, 3, 1]);
    expect(await outbox.get(id)).toMatchObject({ status: 'done' });
    expect(await outbox.listDead()).toEqual([]);
  });

  it('uses the default of ten attempts', async () => {
    const { outbox, clock } = setup();
    let calls = 0;
    outbox.subscribe(NAME, async () => {
      calls += 1;
      throw 'not an Error object';
    });
    const id = await outbox.publish({ name: NAME, payload: '{}' });
    for (let i = 0; i < 15; i++) {
      await outbox.drain();
      clock.advance(HOUR);
    }
    expect(calls).toBe(10);
    expect(await outbox.get(id)).toMatchObject({ status: 'dead', lastError: 'not an Error object' });
  });

  it('redelivers an event whose worker died once its lease has expired', async () => {
    const { outbox, clock, stores } = setup({ visibilityTimeoutMs: 60 * SECOND });
    const id = await outbox.publish({ name: NAME, payload: '{}' });
    // Another worker claims it and never finishes.
    const [held] = await stores.outbox.claim({
      names: [NAME],
      limit: 1,
      now: clock.now(),
      leaseMs: 60 * SECOND,
      workerId: 'crashed',
    });
    expect(held!.id).toBe(id);
    const attempts: number[] = [];
    outbox.subscribe(NAME, async (e) => {
      attempts.push(e.attempt);
    });
    expect(await outbox.drain()).toBe(0);
    clock.advance(60 * SECOND);
    expect(await outbox.drain()).toBe(1);
    expect(attempts).toEqual([2]);
  });

  it('kills instead of delivering when a lease expired on the last attempt', async () => {
    const { outbox, clock, stores } = setup({ maxAttempts: 1, visibilityTimeoutMs: SECOND });
    const id = await outbox.publish({ name: NAME, payload: '{}' });
    await stores.outbox.claim({
      names: [NAME],
      limit: 1,
      now: clock.now(),
      leaseMs: SECOND,
      workerId: 'gone',
    });
    let calls = 0;
    outbox.subscribe(NAME, async () => {
      calls += 1;
    });
    clock.advance(SECOND);
    await outbox.drain();
    expect(calls).toBe(0);
    expect(await outbox.get(id)).toMatchObject({
      status: 'dead',
      lastError: 'Error: lease expired on the last attempt',
    });
  });

  it('runOnce delivers at most `concurrency` events at a time', async () => {
    const { outbox } = setup({ concurrency: 3 });
    let active = 0;
    let peak = 0;
    outbox.subscribe(NAME, async () => {
      active += 1;
      peak = Math.max(peak, active);
      await new Promise((r) => setImmediate(r));
      active -= 1;
    });
    for (let i = 0; i < 7; i++) await outbox.publish({ name: NAME, payload: String(i) });
    expect(await outbox.runOnce()).toBe(3);
    expect(await outbox.drain()).toBe(4);
    expect(peak).toBe(3);
  });

  it('started workers deliver published events without being polled, and stop waits for them', async () => {
    const { outbox } = setup({ pollIntervalMs: HOUR });
    const release = deferred();
    const entered = deferred<string>();
    let finished = false;
    outbox.subscribe(NAME, async (e) => {
      entered.resolve(e.id);
      await release.promise;
      finished = true;
    });
    outbox.start();
    const id = await outbox.publish({ name: NAME, payload: '{}' });
    expect(await entered.promise).toBe(id);
    let stopped = false;
    const stopping = outbox.stop().then(() => {
      stopped = true;
    });
    await new Promise((r) => setImmediate(r));
    expect(stopped).toBe(false);
    release.resolve();
    await stopping;
    expect(finished).toBe(true);
    expect(await outbox.get(id)).toMatchObject({ status: 'done' });
  });

  it('started workers write the result again while the store is away, instead of leaving the lease to run out', async () => {
    const { outbox, stores, logs } = setup({ pollIntervalMs: HOUR });
    const store = stores.outbox!;
    // The first write of each kind fails; the retry's first write commits but its answer is lost.
    const flaky = (write: (...a: any[]) => Promise<boolean>, plan: Array<'down' | 'lost'>) => {
      return async (...a: unknown[]) => {
        const step = plan.shift();
        if (step === 'down') throw new StoreError('database unavailable');
        if (step === 'lost') {
          await write(...a);
          throw new StoreError('database unavailable');
        }
        return write(...a);
      };
    };
    store.complete = flaky(store.complete.bind(store), ['down', 'down']);
    store.retry = flaky(store.retry.bind(store), ['down', 'lost']);
    let calls = 0;
    outbox.subscribe(NAME, async () => {
      calls += 1;
      if (calls === 1) throw new Error('provider 503');
    });
    outbox.start();
    const failing = await outbox.publish({ name: NAME, payload: '{}' });
    await vi.waitFor(() => expect(logs.map((l) => l.fields.event)).toContain('outbox_retry'), {
      timeout: 5000,
    });
    expect(await outbox.get(failing)).toMatchObject({
      status: 'pending',
      lockedBy: null,
      lastError: 'Error: provider 503',
    });
    const ok = await outbox.publish({ name: NAME, payload: '{}' });
    await vi.waitFor(async () => expect(await outbox.get(ok)).toMatchObject({ status: 'done' }), {
      timeout: 5000,
    });
    const events = logs.map((l) => l.fields.event);
    expect(events).not.toContain('outbox_store_error');
    expect(events).not.toContain('outbox_lease_lost');
  });

  it('stop() does not wait for a write retrying against a store that is away', async () => {
    const { outbox, stores, logs } = setup({ pollIntervalMs: HOUR });
    stores.outbox!.complete = () => Promise.reject(new StoreError('database unavailable'));
    const entered = deferred();
    outbox.subscribe(NAME, async () => entered.resolve());
    outbox.start();
    const id = await outbox.publish({ name: NAME, payload: '{}' });
    await entered.promise;
    await new Promise((r) => setTimeout(r, 300)); // the first retry is waiting
    const t0 = Date.now();
    await outbox.stop();
    expect(Date.now() - t0).toBeLessThan(200);
    expect(logs.map((l) => l.fields.event)).toContain('outbox_store_error');
    expect(await outbox.get(id)).toMatchObject({ status: 'pending' }); // its lease runs out
  });

  it("stop() aborts the signal of what it delivers: a consumer's own wait ends and the event goes back for a retry", async () => {
    const { outbox } = setup({ pollIntervalMs: HOUR });
    const entered = deferred<AbortSignal | undefined>();
    outbox.subscribe(NAME, async (e) => {
      entered.resolve(e.signal);
      await new Promise((resolve, reject) => {
        const timer = setTimeout(resolve, 10 * SECOND);
        e.signal?.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(new Error('stopped while waiting'));
        });
      });
    });
    outbox.start();
    const id = await outbox.publish({ name: NAME, payload: '{}' });
    const signal = await entered.promise;
    expect(signal?.aborted).toBe(false);
    const t0 = Date.now();
    await outbox.stop();
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(signal?.aborted).toBe(true);
    expect(await outbox.get(id)).toMatchObject({
      status: 'pending',
      lockedBy: null,
      lastError: 'Error: stopped while waiting',
    });
  });

  it('retries a consumer that asks for a later time no earlier than that time', async () => {
    const { outbox, clock } = setup();
    let calls = 0;
    outbox.subscribe(NAME, async () => {
      calls += 1;
      if (calls === 1)
        throw new RetryLater('held elsewhere', new Date(clock.now().getTime() + 10 * 60 * SECOND));
    });
    const id = await outbox.publish({ name: NAME, payload: '{}' });
    await outbox.drain();
    const due = (await outbox.get(id))!.availableAt.getTime() - clock.now().getTime();
    expect(due).toBe(10 * 60 * SECOND);
    clock.advance(9 * 60 * SECOND);
    expect(await outbox.drain()).toBe(0);
    clock.advance(60 * SECOND);
    expect(await outbox.drain()).toBe(1);
    expect(await outbox.get(id)).toMatchObject({ status: 'done', attempts: 2 });
  });

  it('keeps delivering after a wake-up that found every slot busy', async () => {
    const { outbox } = setup({ concurrency: 1, pollIntervalMs: HOUR });
    const release = deferred();
    const first = deferred();
    const second = deferred();
    const seen: string[] = [];
    outbox.subscribe(NAME, async (e) => {
      seen.push(e.payload);
      if (e.payload === 'a') {
        first.resolve();
        await release.promise;
      } else second.resolve();
    });
    outbox.start();
    await outbox.publish({ name: NAME, payload: 'a' });
    await first.promise;
    // Woken (publish + store wake-up) while the only slot is busy: nothing to claim this turn.
    await outbox.publish({ name: NAME, payload: 'b' });
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    release.resolve();
    const stalled = new Promise((_, reject) =>
      setTimeout(() => reject(new Error('second event never delivered')), 5000),
    );
    await Promise.race([second.promise, stalled]);
    expect(seen).toEqual(['a', 'b']);
  });

  it('started workers keep at most `concurrency` deliveries in flight', async () => {
    const { outbox } = setup({ concurrency: 2, pollIntervalMs: HOUR });
    const releases: Array<() => void> = [];
    const onArrive: Array<() => void> = [];
    let arrived = 0;
    let active = 0;
    let peak = 0;
    let done = 0;
    const waitArrived = (n: number) =>
      new Promise<void>((resolve) => {
        const check = () => (arrived >= n ? resolve() : onArrive.push(check));
        check();
      });
    const release = (n: number) => {
      for (const r of releases.splice(0, n)) r();
    };
    outbox.subscribe(NAME, async () => {
      arrived += 1;
      active += 1;
      peak = Math.max(peak, active);
      for (const f of onArrive.splice(0)) f();
      await new Promise<void>((r) => releases.push(r));
      active -= 1;
      done += 1;
    });
    for (let i = 0; i < 5; i++) await outbox.publish({ name: NAME, payload: String(i) });
    outbox.start();
    await waitArrived(2);
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(arrived).toBe(2);
    release(1);
    await waitArrived(3);
    release(2);
    await waitArrived(5);
    release(2);
    await outbox.stop();
    expect(done).toBe(5);
    expect(peak).toBe(2);
  });

  it('purges finished events after the retention period', async () => {
    const { outbox, clock } = setup({ retentionMs: HOUR });
    outbox.subscribe(NAME, async () => {});
    const id = await outbox.publish({ name: NAME, payload: '{}', dedupeKey: 'once' });
    await outbox.drain();
    expect(await outbox.purge()).toBe(0);
    clock.advance(HOUR + 1);
    expect(await outbox.purge()).toBe(1);
    expect(await outbox.get(id)).toBeNull();
  });

  it('purges in batches of 1,000 until the backlog is gone', async () => {
    const { outbox, clock, stores } = setup({ retentionMs: HOUR });
    outbox.subscribe(NAME, async () => {});
    for (let i = 0; i < 2500; i++) await outbox.publish({ name: NAME, payload: '{}' });
    await outbox.drain();
    const calls: number[] = [];
    const purge = stores.outbox.purge.bind(stores.outbox);
    stores.outbox.purge = async (before, limit) => {
      calls.push(limit ?? -1);
      return purge(before, limit);
    };
    clock.advance(HOUR + 1);
    expect(await outbox.purge()).toBe(2500);
    expect(calls).toEqual([1000, 1000, 1000]);
    expect((await outbox.stats()).done).toBe(0);
  });

  it('a failing purge is logged and the started workers still deliver', async () => {
    const { outbox, stores, logs } = setup();
    stores.outbox.purge = async () => {
      throw new StoreError('down for purge');
    };
    const seen = deferred();
    outbox.subscribe(NAME, async () => seen.resolve());
    await outbox.publish({ name: NAME, payload: '{}' });
    outbox.start();
    await seen.promise;
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        fields: expect.objectContaining({ event: 'outbox_purge_failed' }),
      }),
    );
  });

  it('counts events per status', async () => {
    const { outbox } = setup();
    outbox.subscribe(NAME, async () => {});
    await outbox.publish({ name: NAME, payload: '{}' });
    await outbox.publish({ name: 'other', payload: '{}' });
    await outbox.drain();
    expect(await outbox.stats()).toEqual({ pending: 1, done: 1, dead: 0 });
  });

  it('refuses invalid options at start-up', () => {
    for (const bad of [
      { maxAttempts: 0 },
      { concurrency: 1.5 },
      { baseDelayMs: -1 },
      { pollIntervalMs: Number.NaN },
    ]) {
      expect(() => setup(bad as OutboxOptions)).toThrow(ConfigError);
    }
  });
});

describe('backoff', () => {
  it('waits a random time up to base * 2^(attempt-1), capped', () => {
    const samples = (attempt: number, base: number, cap: number) =>
      Array.from({ length: 2000 }, () => backoffDelay(attempt, base, cap));
    const third = samples(3, SECOND, HOUR);
    expect(Math.min(...third)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...third)).toBeLessThanOrEqual(4 * SECOND);
    // Full jitter: spread over the whole range, not bunched at the top.
    expect(third.some((d) => d < SECOND)).toBe(true);
    expect(third.some((d) => d > 3 * SECOND)).toBe(true);
    expect(Math.max(...samples(40, SECOND, HOUR))).toBeLessThanOrEqual(HOUR);
    expect(samples(30, SECOND, HOUR).some((d) => d > HOUR / 2)).toBe(true);
    expect(backoffDelay(1, 0, HOUR)).toBe(0);
  });
});

describe('ph.outbox', () => {
  it('exposes publish, runOnce, drain, start, stop, listDead and replay', async () => {
    const ph = createPostern({ issuer: 'https://i.test', audience: 'a', clock: new TestClock() });
    for (const fn of [
      'publish',
      'runOnce',
      'drain',
      'start',
      'stop',
      'listDead',
      'replay',
      'subscribe',
      'get',
      'stats',
    ]) {
      expect(typeof (ph.outbox as unknown as Record<string, unknown>)[fn]).toBe('function');
    }
    const id = await ph.outbox.publish({ name: 'x.y', payload: '{}' });
    expect(await ph.outbox.get(id)).toMatchObject({ name: 'x.y', status: 'pending' });
    await ph.close();
  });

  it('refuses a malformed event with validation_failed and stores nothing', async () => {
    const ph = createPostern({ issuer: 'https://i.test', audience: 'a', clock: new TestClock() });
    for (const bad of [
      {},
      { name: '', payload: '{}' },
      { name: 'x', payload: 1 },
      { name: 'x', payload: '', dedupeKey: 2 },
    ]) {
      await expect(ph.outbox.publish(bad as never)).rejects.toMatchObject({ code: 'validation_failed' });
    }
    expect(await ph.outbox.stats()).toEqual({ pending: 0, done: 0, dead: 0 });
    await ph.close();
  });
});
