import { describe, expect, it } from 'vitest';
import { memoryLimiterStore } from '../../src/memory/limiter-store.js';

const at = (ms: number) => new Date(1_800_000_000_000 + ms);

describe('memoryLimiterStore', () => {
  it('past maxKeys drops the counter whose window started first, and keeps the rest', async () => {
    const store = memoryLimiterStore(2);
    await store.consume('a', 1, 1000, at(0));
    await store.consume('b', 1, 1000, at(10));
    // a's window ended and restarts: it now ends after b's.
    await store.consume('a', 1, 1000, at(1001));
    expect(await store.get('b', at(1005))).not.toBeNull(); // b still live
    await store.consume('c', 1, 1000, at(1006));
    expect(await store.get('b', at(1006))).toBeNull();
    expect(await store.get('a', at(1006))).toEqual({ points: 1, resetAt: at(2001) });
    expect(await store.get('c', at(1006))).toEqual({ points: 1, resetAt: at(2006) });
  });

  it('among counters with the same points drops the oldest window, whatever its length', async () => {
    const store = memoryLimiterStore(2);
    await store.consume('long', 1, 60_000, at(0));
    await store.consume('short', 1, 1000, at(5));
    await store.consume('new', 1, 60_000, at(6));
    expect(await store.get('long', at(6))).toBeNull();
    expect(await store.get('short', at(6))).not.toBeNull();
    expect(await store.get('new', at(6))).not.toBeNull();
  });

  it('keeps at most maxKeys counters under a flood, making room for an eighth of them at once', async () => {
    const store = memoryLimiterStore(1000);
    const keys = Array.from({ length: 10_000 }, (_, i) => `forgot:email:flood-${i}@x.test`);
    for (const [i, key] of keys.entries()) await store.consume(key, 1, 900_000, at(i));
    const kept = [];
    for (const key of keys) if (await store.get(key, at(10_000))) kept.push(key);
    expect(kept.length).toBeLessThanOrEqual(1000);
    expect(kept.length).toBeGreaterThan(875);
    // The newest keys are the ones kept.
    expect(kept.at(-1)).toBe(keys.at(-1));
    expect(kept[0]).toBe(keys[10_000 - kept.length]);
  });

  it('makes room from ended windows before it drops a live counter', async () => {
    const store = memoryLimiterStore(1000);
    for (let i = 0; i < 1000; i++) await store.consume(`flood-${i}`, 1, 1000, at(0));
    // The flood's windows have ended; new keys push them out without evicting live ones.
    await store.consume('victim', 7, 60_000, at(2000));
    for (let i = 0; i < 999; i++) await store.consume(`later-${i}`, 1, 60_000, at(2000 + i));
    expect(await store.get('victim', at(3000))).toEqual({ points: 7, resetAt: at(62_000) });
  });

  it('counts a live window whatever length a later call names, and deletes by key alone', async () => {
    const store = memoryLimiterStore();
    await store.consume('k', 2, 1000, at(0));
    expect(await store.consume('k', 1, 5000, at(10))).toEqual({ points: 3, resetAt: at(1000) });
    expect(await store.consume('k', -5, 5000, at(20))).toEqual({ points: 0, resetAt: at(1000) });
    await store.delete('k');
    expect(await store.get('k', at(30))).toBeNull();
    expect(await store.consume('k', 1, 5000, at(40))).toEqual({ points: 1, resetAt: at(5040) });
  });

  it('drops fresh keys before a counter with more points, so a flood cannot wipe a lockout', async () => {
    const store = memoryLimiterStore(100);
    // A guessed password's counter, near its limit.
    for (let i = 0; i < 10; i++) await store.consume('login:email:victim', 1, 900_000, at(i));
    // An older counter with a few points, and one with two.
    await store.consume('few', 5, 900_000, at(0));
    await store.consume('two', 2, 900_000, at(0));
    // A flood of fresh keys (one request each) far past the cap.
    for (let i = 0; i < 1000; i++)
      await store.consume(`forgot:email:flood-${i}@x.test`, 1, 900_000, at(100 + i));
    expect(await store.get('login:email:victim', at(2000))).toMatchObject({ points: 10 });
    expect(await store.get('few', at(2000))).toMatchObject({ points: 5 });
    expect(await store.get('two', at(2000))).toMatchObject({ points: 2 });
    expect(await store.get('forgot:email:flood-999@x.test', at(2000))).not.toBeNull();
    expect(await store.get('forgot:email:flood-0@x.test', at(2000))).toBeNull();
    // Only a flood of keys with at least as many points each reaches it.
    for (let i = 0; i < 100; i++) await store.consume(`heavy-${i}`, 8, 900_000, at(3000 + i));
    expect(await store.get('login:email:victim', at(4000))).toBeNull();
  });
});
