import { createPostern, type Mail, type Postern, silentLogger } from '@postern/core';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStores } from '../src/stores.js';
import { NO_SERVER_REASON, openTestDatabase, serverUrl, type TestDatabase } from './helpers/test-db.js';

// Two instances on one database, as two app processes: logins with the old password run in a
// loop on both while a reset commits on one. A login that checked the old password must not
// keep a session, whichever instance ran it and however its steps interleave with the reset.
const server = await serverUrl();
const OLD = 'correct-horse-battery-staple-42';
const NEW = 'violet-otter-jumps-gravel-1987';
const LOOPS = 6;

let db: TestDatabase;
const pools: pg.Pool[] = [];
const mails: Mail[] = [];
let instances: Postern[] = [];

describe.skipIf(!server)(
  `logins racing a password reset on two instances${server ? '' : ` (skipped: ${NO_SERVER_REASON})`}`,
  () => {
    beforeAll(async () => {
      db = await openTestDatabase('credential_races', { max: 4 });
      for (let i = 0; i < 2; i++) {
        const pool = new pg.Pool({ connectionString: db.url!, max: LOOPS + 2 });
        pools.push(pool);
        instances.push(
          createPostern({
            issuer: 'https://postern.test',
            audience: 'races',
            stores: postgresStores({ pool, schema: db.schema, listen: false }),
            mailer: { send: async (m) => void mails.push(m) },
            logger: silentLogger,
            // Every try is counted: keep the limits out of the way of the loops.
            throttle: {
              'login:email+ip': { points: 100_000, durationSeconds: 900 },
              'login:email': { points: 100_000, durationSeconds: 900 },
              'login:ip': { points: 100_000, durationSeconds: 900 },
            },
          }),
        );
      }
    });
    afterAll(async () => {
      for (const ph of instances) await ph.close();
      instances = [];
      for (const p of pools) await p.end();
      await db?.close();
    });

    it('leaves no session of a login that checked the old password', async () => {
      const [a, b] = instances as [Postern, Postern];
      const email = `race-${Date.now()}@example.test`;
      const { user } = await a.auth.signup({ name: 'Race', email, password: OLD });

      let resetDone = false;
      let started = 0;
      const loop = async (ph: Postern) => {
        // Until the reset is done, then a few more: those started before it are the point.
        for (let extra = 0; extra < 2; extra += resetDone ? 1 : 0) {
          started++;
          await ph.auth.login({ email, password: OLD, refreshToken: true }).catch(() => null);
        }
      };
      const loops = Array.from({ length: LOOPS }, (_, i) => loop(i % 2 === 0 ? a : b));
      // Let the loops get going, then reset on one instance while they run.
      while (started < LOOPS * 3) await new Promise((r) => setTimeout(r, 5));
      await a.auth.forgot({ email });
      const resetMail = () => mails.find((m) => m.to === email && /reset code/i.test(m.subject));
      while (!resetMail()) await new Promise((r) => setTimeout(r, 5));
      await b.auth.forgotReset({ code: /Reset code: (\S+)/.exec(resetMail()!.text)![1]!, password: NEW });
      resetDone = true;
      await Promise.all(loops);

      const stores = postgresStores({ pool: pools[0]!, schema: db.schema, listen: false });
      expect(await stores.sessions.listForUser(user.id, new Date())).toEqual([]);
      // The new password still logs in.
      await expect(a.auth.login({ email, password: NEW })).resolves.toMatchObject({ tokenType: 'Bearer' });
    });
  },
);
