import { createHash, randomUUID } from 'node:crypto';
import { createPostern, silentLogger } from '@postern/core';
import { TestClock } from '@postern/testkit';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStores } from '../src/stores.js';
import { NO_SERVER_REASON, openTestDatabase, serverUrl, type TestDatabase } from './helpers/test-db.js';

// A refresh refused at the end of the budget window asks a second statement whether the budget
// refused it. Another request can rotate in between (a new window, a grace sibling): the token
// may then rotate after all, and must never be taken for reuse (which ends the session).
const server = await serverUrl();
const PASSWORD = 'correct horse battery staple 42';
const sha = (t: string) => createHash('sha256').update(t).digest('base64url');
let db: TestDatabase;

describe.skipIf(!server)(`refresh budget races${server ? '' : ` (skipped: ${NO_SERVER_REASON})`}`, () => {
  beforeAll(async () => {
    db = await openTestDatabase('refresh_budget_races');
  });
  afterAll(async () => {
    await db?.close();
  });

  /** A pool that runs `between` once, just before the store's budget verdict query. */
  function pausedPool(pool: pg.Pool) {
    let between: (() => Promise<void>) | null = null;
    const wrapped = {
      async query(text: string, values?: unknown[]) {
        if (between && text.includes('AS over_budget')) {
          const run = between;
          between = null;
          await run();
        }
        return pool.query(text, values);
      },
      connect: () => pool.connect(),
    } as unknown as pg.Pool;
    const pause = (fn: () => Promise<void>) => {
      between = fn;
    };
    return { wrapped, pause };
  }

  it.each([
    ['the live token, while another request grace-repeats its parent', 60, 'parent'],
    ['the live token, while a second tab rotates the same token', 30, 'same'],
  ] as const)('refused at the window end, %s: rotates, the session lives', async (_, grace, other) => {
    const { wrapped, pause } = pausedPool(db.pool);
    const clock = new TestClock(Date.UTC(2030, 0, 1));
    const budget = { rotations: 2, windowSeconds: 60 };
    const ph = createPostern({
      issuer: 'https://postern.test',
      audience: 'races',
      clock,
      logger: silentLogger,
      mailer: { send: async () => {} },
      stores: postgresStores({ pool: wrapped, schema: db.schema, listen: false }),
      refreshReuseGraceSeconds: grace,
      throttle: { 'refresh:session': { points: budget.rotations, durationSeconds: budget.windowSeconds } },
    });
    const direct = postgresStores({ pool: db.pool, schema: db.schema, listen: false });
    const email = `r-${randomUUID()}@example.test`;
    await ph.auth.signup({ name: 'R', email, password: PASSWORD });
    const login = (await ph.auth.login(
      { email, password: PASSWORD, refreshToken: true },
      { ip: '192.0.2.1' },
    )) as {
      refreshToken: string;
      accessToken: string;
    };
    const start = clock.now().getTime();
    const r1 = await ph.auth.refresh({ refreshToken: login.refreshToken });
    clock.advance(20_000);
    const r2 = await ph.auth.refresh({ refreshToken: r1.refreshToken! });
    clock.advance(39_990); // 10 ms before the window ends: the budget is spent.
    pause(async () => {
      // Another instance, a moment later: the window has ended, it starts the next one.
      const from = other === 'same' ? r2.refreshToken! : r1.refreshToken!;
      const next = { hash: sha(randomUUID()), idleExpiresAt: new Date(start + 86_400_000) };
      const res = await direct.sessions.rotate(sha(from), next, new Date(start + 60_000), {
        graceSeconds: grace,
        budget,
      });
      expect(res).toMatchObject({ userId: expect.any(String) });
    });
    const answer = await ph.auth.refresh({ refreshToken: r2.refreshToken! });
    expect(answer.refreshToken).toEqual(expect.any(String));
    await expect(ph.auth.verifyAccessToken(login.accessToken)).resolves.toMatchObject({});
    await ph.close();
  });
});
