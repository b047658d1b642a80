import { createPostern } from '@postern/core';
import { memoryStores } from '@postern/core/memory';
import type { MailEvent } from '@postern/core/ports';
import { recordingLogger, TestClock } from '@postern/testkit';
import { describe, expect, it } from 'vitest';
import { memoryMailEventStore } from '../../src/memory/inbox-stores.js';
import { memoryOutboxStore } from '../../src/memory/outbox-store.js';

const LEASE = { leaseMs: 30_000, workerId: 'w' };

describe('in-memory outbox cap', () => {
  it('keeps at most maxFinished finished events, dropping the oldest with its dedupe key, warning once', async () => {
    const clock = new TestClock();
    const { logger, warnings } = recordingLogger();
    const outbox = memoryOutboxStore({ maxFinished: 3, logger });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { id } = await outbox.publish({ name: 'n', payload: `p${i}`, dedupeKey: `k${i}` }, clock.now());
      const [e] = await outbox.claim({ names: ['n'], limit: 1, now: clock.now(), ...LEASE });
      await outbox.complete(id, { workerId: 'w', attempt: e!.attempts }, null, clock.now());
      ids.push(id);
      clock.advance(1);
    }
    expect(await outbox.stats()).toEqual({ pending: 0, done: 3, dead: 0 });
    for (const id of ids.slice(0, 2)) expect(await outbox.get(id)).toBeNull();
    for (const id of ids.slice(2)) expect(await outbox.get(id)).toMatchObject({ status: 'done' });
    // A dropped event's key is free again; a kept one still de-duplicates.
    expect(
      (await outbox.publish({ name: 'n', payload: 'again', dedupeKey: 'k0' }, clock.now())).created,
    ).toBe(true);
    expect(await outbox.publish({ name: 'n', payload: 'again', dedupeKey: 'k4' }, clock.now())).toEqual({
      id: ids[4],
      created: false,
    });
    expect(warnings()).toEqual([
      expect.objectContaining({ event: 'memory_store_cap', store: 'outbox', kept: 3 }),
    ]);
    // Once a purge made room, the next drop warns again.
    expect(await outbox.purge(clock.now())).toBe(3);
    for (let i = 0; i < 4; i++) await outbox.publish({ name: 'n', payload: `q${i}` }, clock.now());
    for (const e of await outbox.claim({ names: ['n'], limit: 10, now: clock.now(), ...LEASE })) {
      await outbox.complete(e.id, { workerId: 'w', attempt: e.attempts }, null, clock.now());
    }
    expect(warnings()).toHaveLength(2);
  });

  it('never drops a pending event, however many wait', async () => {
    const clock = new TestClock();
    const outbox = memoryOutboxStore({ maxFinished: 2 });
    const ids: string[] = [];
    for (let i = 0; i < 50; i++)
      ids.push((await outbox.publish({ name: 'n', payload: `${i}` }, clock.now())).id);
    // Leased ones are pending too.
    await outbox.claim({ names: ['n'], limit: 10, now: clock.now(), ...LEASE });
    expect(await outbox.stats()).toEqual({ pending: 50, done: 0, dead: 0 });
    for (const id of ids) expect(await outbox.get(id)).not.toBeNull();
  });
});

describe('in-memory mail event cap', () => {
  const event = (n: number, at: Date): MailEvent => ({
    id: `e${n}`,
    type: 'email.delivered',
    kind: 'status',
    status: 'delivered',
    providerMessageId: `m${n}`,
    occurredAt: at,
    recordedAt: at,
    detail: null,
    appliedAt: null,
  });

  it('keeps at most max events, the oldest recorded going first, warning once', async () => {
    const { logger, warnings } = recordingLogger();
    const store = memoryMailEventStore({ max: 3, logger });
    for (let n = 0; n < 6; n++) await store.record(event(n, new Date(n)));
    for (const n of [0, 1, 2]) expect(await store.findById(`e${n}`)).toBeNull();
    for (const n of [3, 4, 5]) expect(await store.findById(`e${n}`)).not.toBeNull();
    expect(warnings()).toEqual([
      expect.objectContaining({ event: 'memory_store_cap', store: 'mail_events' }),
    ]);
  });
});

describe('memoryStores caps', () => {
  it('takes the caps as options, checked, and warns through the instance logger by default', async () => {
    expect(() => memoryStores({ maxFinishedEvents: 0 })).toThrow(/maxFinishedEvents/);
    expect(() => memoryStores({ maxMailEvents: 1.5 })).toThrow(/maxMailEvents/);
    const { logger, warnings } = recordingLogger();
    const stores = memoryStores({ maxMailEvents: 1, logger });
    for (let n = 0; n < 3; n++) await stores.mailEvents.record(event(n, new Date(n)));
    expect(await stores.mailEvents.findById('e2')).not.toBeNull();
    expect(await stores.mailEvents.findById('e1')).toBeNull();
    expect(warnings()).toHaveLength(1);
  });

  const event = (n: number, at: Date): MailEvent => ({
    id: `e${n}`,
    type: 'email.delivered',
    kind: 'status',
    status: 'delivered',
    providerMessageId: null,
    occurredAt: at,
    recordedAt: at,
    detail: null,
    appliedAt: at,
  });
});

describe('retention through the workers', () => {
  it('ph.outbox.purge() deletes delivery events past their retention with the done events', async () => {
    const clock = new TestClock();
    const stores = memoryStores({ clock });
    const ph = createPostern({
      issuer: 'https://postern.test',
      audience: 'test',
      clock,
      stores,
      inbox: { unmatchedEventRetentionMs: 60_000, mailEventRetentionMs: 120_000 },
    });
    const deliver = (id: string, type: string) =>
      ph.inbox.consumers.delivery({
        id,
        name: 'event',
        payload: JSON.stringify({ type, data: { email_id: 'never-seen' } }),
        attempt: 1,
        createdAt: clock.now(),
      });
    // One waits for a message that never comes; one is stored as applied (no effect for its type).
    expect(await deliver('waiting', 'email.delivered')).toEqual({ outcome: 'pending' });
    expect(await deliver('applied', 'email.scheduled')).toEqual({ outcome: 'ignored' });
    clock.advance(59_000);
    expect(await ph.outbox.purge()).toBe(0);
    clock.advance(2_000);
    expect(await ph.outbox.purge()).toBe(1);
    expect(await stores.mailEvents.findById('waiting')).toBeNull();
    expect(await stores.mailEvents.findById('applied')).not.toBeNull();
    clock.advance(60_000);
    expect(await ph.outbox.purge()).toBe(1);
    expect(await stores.mailEvents.findById('applied')).toBeNull();
    await ph.close();
  });

  it('refuses a retention that is not a whole number of milliseconds', () => {
    const make = (inbox: object) => () =>
      createPostern({ issuer: 'https://postern.test', audience: 'test', inbox });
    expect(make({ unmatchedEventRetentionMs: 0 })).toThrow(/unmatchedEventRetentionMs/);
    expect(make({ mailEventRetentionMs: -1 })).toThrow(/mailEventRetentionMs/);
  });
});

describe('in-memory limiter cap', () => {
  it('warns once when a full limiter drops live counters, again only after it had room, never for ended ones', async () => {
    const clock = new TestClock();
    const { logger, warnings } = recordingLogger();
    const { limiter } = memoryStores({ clock, limiterMaxKeys: 2, logger });
    await limiter.consume('a', 1, 1000, clock.now());
    await limiter.consume('b', 1, 1000, clock.now());
    // Full, and both counters live: one is dropped, with a warning.
    await limiter.consume('c', 1, 1000, clock.now());
    await limiter.consume('d', 1, 1000, clock.now());
    await limiter.consume('e', 1, 1000, clock.now());
    expect(warnings()).toEqual([
      expect.objectContaining({ event: 'memory_store_cap', store: 'limiter', kept: 2 }),
    ]);
    // Every window ended: making room drops ended counters only, which is no warning, and the
    // next drop of live counters warns again.
    clock.advance(1000);
    await limiter.consume('f', 1, 1000, clock.now());
    await limiter.consume('g', 1, 1000, clock.now());
    expect(warnings()).toHaveLength(1);
    await limiter.consume('h', 1, 1000, clock.now());
    expect(warnings()).toHaveLength(2);
  });
});
