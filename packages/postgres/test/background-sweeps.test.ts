import type { Session } from '@postern/core/ports';
import { recordingLogger } from '@postern/testkit';
import { describe, expect, it } from 'vitest';
import type { Queryable } from '../src/db.js';
import type { StoreDeps } from '../src/deps.js';
import { postgresLimiterStore } from '../src/stores/limiter-store.js';
import { postgresSessionStore } from '../src/stores/session-store.js';

// A sweep runs every so many writes; the write that triggers it must not wait for it, a failed
// sweep must not fail it, and a sweep still running is not started again. A fake database
// answers every statement at once except the sweeps, which wait until the test lets them go.
function fakeDb(isSweep: (sql: string) => boolean, row: Record<string, unknown>) {
  const sweeps: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
  const db: Queryable = {
    query(sql) {
      if (!isSweep(sql)) return Promise.resolve({ rows: [row], rowCount: 1 });
      return new Promise((resolve, reject) =>
        sweeps.push({ resolve: () => resolve({ rows: [], rowCount: 0 }), reject }),
      );
    },
  };
  return { db, sweeps };
}

function deps(db: Queryable, inTransaction = false) {
  const log = recordingLogger();
  const d = { db, t: (x: string) => `"s"."${x}"`, logger: log.logger, inTransaction } as unknown as StoreDeps;
  return { deps: d, log };
}

/** True when `p` settles within the current turn of the event loop (the fake answers at once). */
const settlesNow = (p: Promise<unknown>) =>
  Promise.race([p.then(() => true), new Promise<boolean>((r) => setImmediate(() => r(false)))]);

const now = new Date(Date.UTC(2030, 0, 1));

describe('background sweeps', () => {
  it('limiter: the consume that starts a sweep does not wait for it; one sweep at a time; a failure is logged', async () => {
    const { db, sweeps } = fakeDb((sql) => sql.startsWith('DELETE'), { points: 1, reset_at: now });
    const { deps: d, log } = deps(db);
    const limiter = postgresLimiterStore(d);
    for (let i = 0; i < 1023; i++) await limiter.consume(`k${i}`, 1, 1000, now);
    expect(await settlesNow(limiter.consume('k', 1, 1000, now))).toBe(true);
    expect(sweeps).toHaveLength(1);
    // The next 1024 consumes find the sweep still running: none starts another.
    for (let i = 0; i < 1024; i++) await limiter.consume(`k${i}`, 1, 1000, now);
    expect(sweeps).toHaveLength(1);
    sweeps[0]!.reject(new Error('sweep refused'));
    await new Promise((r) => setImmediate(r));
    expect(log.warnings()).toEqual([expect.objectContaining({ event: 'limiter_sweep_failed' })]);
    for (let i = 0; i < 1024; i++) await limiter.consume(`k${i}`, 1, 1000, now);
    expect(sweeps).toHaveLength(2);
  });

  it('sessions: the create that starts a sweep does not wait for it', async () => {
    const { db, sweeps } = fakeDb((sql) => sql.startsWith('DELETE') || sql.startsWith('UPDATE'), {});
    const { deps: d } = deps(db);
    const sessions = postgresSessionStore(d);
    const session = (i: number): Session => ({
      id: `s${i}`,
      userId: 'u',
      createdAt: now,
      expiresAt: now,
      idleExpiresAt: now,
      lastUsedAt: now,
      authTime: now,
      amr: ['pwd'],
      ip: '',
      userAgent: null,
      endedAt: null,
      endReason: null,
    });
    for (let i = 0; i < 255; i++) await sessions.create(session(i), null, { maxPerUser: 5 });
    expect(await settlesNow(sessions.create(session(255), null, { maxPerUser: 5 }))).toBe(true);
    expect(sweeps).toHaveLength(1);
  });

  it('stores bound to a transaction leave sweeping to the pool', async () => {
    const { db, sweeps } = fakeDb((sql) => sql.startsWith('DELETE'), { points: 1, reset_at: now });
    const limiter = postgresLimiterStore(deps(db, true).deps);
    for (let i = 0; i < 2048; i++) await limiter.consume(`k${i}`, 1, 1000, now);
    expect(sweeps).toHaveLength(0);
  });
});
