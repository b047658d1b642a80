import { TestClock } from '@postern/testkit';
import { describe, expect, it } from 'vitest';
import { dropEnded, hasEnded, sweepEvery } from '../../src/memory/expiry.js';
import { memorySessionStore } from '../../src/memory/session-store.js';
import type { Session } from '../../src/ports/session-store.js';

const DAY = 24 * 3600 * 1000;

describe('memory expiry helper', () => {
  it('counts a record as ended at its end, not before', () => {
    expect(hasEnded(new Date(1000), new Date(999))).toBe(false);
    expect(hasEnded(new Date(1000), new Date(1000))).toBe(true);
    expect(hasEnded(1000, 1001)).toBe(true);
  });

  it('sweeps on every 256th write and drops only what has ended', () => {
    const map = new Map([
      ['ended', { end: new Date(10) }],
      ['live', { end: new Date(11) }],
    ]);
    const sweep = sweepEvery((now) => dropEnded(map, (v) => v.end, now));
    for (let i = 0; i < 255; i++) sweep(new Date(10));
    expect(map.size).toBe(2);
    sweep(new Date(10));
    expect([...map.keys()]).toEqual(['live']);
  });

  it('lets the session store forget an ended session a day after it ended', async () => {
    const clock = new TestClock();
    const store = memorySessionStore(clock);
    const session = (id: string): Session => {
      const now = clock.now();
      return {
        id,
        userId: `u-${id}`,
        createdAt: now,
        expiresAt: new Date(now.getTime() + 30 * DAY),
        idleExpiresAt: new Date(now.getTime() + 30 * DAY),
        lastUsedAt: now,
        authTime: now,
        amr: ['pwd'],
        ip: '192.0.2.1',
        userAgent: null,
        endedAt: null,
        endReason: null,
      };
    };
    await store.create(session('old'), null, { maxPerUser: 5 });
    await store.revoke('old', clock.now(), 'logout');
    clock.advance(DAY - 1);
    // The 256th write sweeps, a moment too early for it.
    for (let i = 0; i < 255; i++) await store.create(session(`a${i}`), null, { maxPerUser: 5 });
    expect(await store.findById('old')).toMatchObject({ endReason: 'logout' });
    clock.advance(1);
    for (let i = 0; i < 255; i++) await store.create(session(`b${i}`), null, { maxPerUser: 5 });
    expect(await store.findById('old')).not.toBeNull();
    await store.create(session('last'), null, { maxPerUser: 5 });
    expect(await store.findById('old')).toBeNull();
  });
});
