import { randomBytes } from 'node:crypto';
import type { Session } from '@postern/core/ports';
import { TestClock } from '@postern/testkit';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { postgresStores } from '../src/stores.js';
import { NO_SERVER_REASON, openTestDatabase, serverUrl } from './helpers/test-db.js';

// A cookie session's token is derived from the one before it and a salt kept on its row. A
// database dump plus an old token must not lead to a later token: a salt is kept only while a
// repeat of the token before it may still need it.
const server = await serverUrl();
const DAY = 24 * 3600 * 1000;
const hex = () => randomBytes(16).toString('hex');

describe.skipIf(!server)(
  `cookie session salts${server ? '' : ` (skipped: ${NO_SERVER_REASON})`}`,
  async () => {
    const db = await openTestDatabase('cookie_salts');
    afterAll(() => db.close());
    const clock = new TestClock(Date.UTC(2030, 0, 1));
    const stores = postgresStores({ pool: db.pool, schema: db.schema, clock, listen: false });
    afterAll(() => stores.close?.());
    const session = (over: Partial<Session> = {}): Session => {
      const now = clock.now();
      return {
        id: hex(),
        userId: hex(),
        createdAt: now,
        expiresAt: new Date(now.getTime() + 30 * DAY),
        idleExpiresAt: new Date(now.getTime() + 7 * DAY),
        lastUsedAt: now,
        authTime: now,
        amr: ['pwd'],
        ip: '192.0.2.7',
        userAgent: null,
        endedAt: null,
        endReason: null,
        cookie: true,
        ...over,
      };
    };
    const next = () => ({
      hash: hex(),
      idleExpiresAt: new Date(clock.now().getTime() + 7 * DAY),
      salt: hex(),
    });
    const salts = async (sessionId: string) =>
      (
        await db.pool.query(
          `SELECT hash, salt, used_at FROM "${db.schema}".refresh_tokens WHERE session_id = $1 ORDER BY created_at`,
          [sessionId],
        )
      ).rows as Array<{ hash: string; salt: string | null; used_at: Date | null }>;
    const opts = { cookieGraceSeconds: 10 };

    it('a rotated token keeps no salt; the newest keeps its salt while its predecessor may repeat', async () => {
      const s = session();
      const t0 = hex();
      await stores.sessions.create(s, { hash: t0, idleExpiresAt: s.idleExpiresAt }, { maxPerUser: 50 });
      const t1 = next();
      await stores.sessions.rotate(t0, t1, clock.now(), opts);
      clock.advance(1000);
      const t2 = next();
      await stores.sessions.rotate(t1.hash, t2, clock.now(), opts);
      const rows = await salts(s.id);
      expect(rows.map((r) => r.hash)).toEqual([t0, t1.hash, t2.hash]);
      // t1 was rotated: its salt would lead from t0 to t1, and on to t2 with t2's.
      expect(rows.map((r) => r.salt)).toEqual([null, null, t2.salt]);
      // The repeat of t1 within its window still finds t2's salt.
      await expect(stores.sessions.rotate(t1.hash, next(), clock.now(), opts)).resolves.toMatchObject({
        repeat: 'cookie',
        salt: t2.salt,
      });
    });

    it("the newest token's salt is cleared by the sweep once its predecessor's window is over", async () => {
      const s = session();
      const t0 = hex();
      await stores.sessions.create(s, { hash: t0, idleExpiresAt: s.idleExpiresAt }, { maxPerUser: 50 });
      const t1 = next();
      await stores.sessions.rotate(t0, t1, clock.now(), opts);
      clock.advance(3601_000);
      // The sweep runs every 256 creates, in the background.
      for (let i = 0; i < 256; i++) {
        const other = session();
        await stores.sessions.create(other, null, { maxPerUser: 50 });
      }
      await vi.waitFor(async () => expect((await salts(s.id)).map((r) => r.salt)).toEqual([null, null]), {
        timeout: 10_000,
      });
    });
  },
);
