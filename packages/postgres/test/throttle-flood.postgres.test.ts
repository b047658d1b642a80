import { createPostern, type Postern, silentLogger } from '@postern/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStores } from '../src/stores.js';
import { NO_SERVER_REASON, openTestDatabase, serverUrl, type TestDatabase } from './helpers/test-db.js';

// Guesses refused by a stranger's own (email, address) bucket, racing on a real pool, never
// hold a point in the owner's email bucket: the owner signs in from elsewhere meanwhile.
const server = await serverUrl();
const PASSWORD = 'correct-horse-battery-staple-42';
let db: TestDatabase;
let ph: Postern;

describe.skipIf(!server)(
  `a flood of refused logins${server ? '' : ` (skipped: ${NO_SERVER_REASON})`}`,
  () => {
    beforeAll(async () => {
      db = await openTestDatabase('throttle_flood', { max: 8 });
      ph = createPostern({
        issuer: 'https://postern.test',
        audience: 'throttle-flood',
        stores: postgresStores({ pool: db.pool, schema: db.schema, listen: false }),
        logger: silentLogger,
        // The address bucket out of the way: the pair bucket (10) refuses the flood; the email
        // bucket's ceiling leaves room for the 10 failures and the owner's login, not one more.
        throttle: {
          'login:ip': { points: 1000, durationSeconds: 900 },
          'login:email': { points: 11, durationSeconds: 900 },
        },
      });
    });
    afterAll(async () => {
      await ph?.close();
      await db?.close();
    });

    it("holds no point in the owner's email bucket while the pair bucket refuses", async () => {
      const email = `flood-${Date.now()}@example.test`;
      await ph.auth.signup({ name: 'Owner', email, password: PASSWORD });
      const A = '203.0.113.50';
      for (let i = 0; i < 10; i++)
        await expect(ph.auth.login({ email, password: `nope-${i}` }, { ip: A })).rejects.toMatchObject({
          code: 'invalid_credentials',
        });
      const flood = Array.from({ length: 60 }, () =>
        ph.auth.login({ email, password: 'nope' }, { ip: A }).then(
          () => ({ code: 'signed in', reason: undefined }),
          (e: { code?: string; reason?: string }) => e,
        ),
      );
      const owner = ph.auth
        .login({ email, password: PASSWORD }, { ip: '198.51.100.9' })
        .catch((e: unknown) => e);
      const refused = await Promise.all(flood);
      expect(refused.every((e) => e.code === 'rate_limited' && e.reason === 'login:email+ip')).toBe(true);
      expect(await owner).toHaveProperty('accessToken');
    });
  },
);
