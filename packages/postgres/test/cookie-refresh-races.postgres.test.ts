import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createPostern, type Postern, silentLogger } from '@postern/core';
import { TestClock } from '@postern/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStores } from '../src/stores.js';
import { NO_SERVER_REASON, openTestDatabase, serverUrl, type TestDatabase } from './helpers/test-db.js';

// Browser tabs refreshing at once with one cookie, served by two instances on one database:
// each instance has its own pool, so the rotations really race on the token's row.
const server = await serverUrl();
const PASSWORD = 'correct horse battery staple 42';
let db: TestDatabase;
const pools: pg.Pool[] = [];
const instances: Postern[] = [];

describe.skipIf(!server)(`cookie refresh races${server ? '' : ` (skipped: ${NO_SERVER_REASON})`}`, () => {
  const clock = new TestClock(Date.UTC(2030, 0, 1));
  // One signing key for both, as instances of one deployment have.
  const keys = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
  beforeAll(async () => {
    db = await openTestDatabase('cookie_refresh_races');
    for (let i = 0; i < 2; i++) {
      const pool = new pg.Pool({ connectionString: db.url!, max: 6 });
      pools.push(pool);
      instances.push(
        createPostern({
          issuer: 'https://postern.test',
          audience: 'races',
          keys,
          clock,
          logger: silentLogger,
          mailer: { send: async () => {} },
          stores: postgresStores({ pool, schema: db.schema, listen: false }),
          cookieSessions: { trustedOrigins: ['https://app.postern.test'] },
        }),
      );
    }
  });
  afterAll(async () => {
    for (const ph of instances) await ph.close();
    for (const pool of pools) await pool.end();
    await db?.close();
  });

  it('twelve refreshes with one cookie over two instances: all succeed with one newest token, and the session lives', async () => {
    const [a, b] = instances as [Postern, Postern];
    const email = `c-${randomUUID()}@example.test`;
    await a.auth.signup({ name: 'C', email, password: PASSWORD });
    const login = (await a.auth.login({ email, password: PASSWORD, refreshToken: 'cookie' })) as {
      refreshToken: string;
    };
    let current = login.refreshToken;
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, n) => (n % 2 ? a : b).auth.refresh({ refreshToken: current })),
      );
      const tokens = new Set(answers.map((x) => x.refreshToken));
      expect(tokens.size).toBe(1);
      for (const x of answers) await expect(b.auth.verifyAccessToken(x.accessToken)).resolves.toBeDefined();
      current = [...tokens][0]!;
      clock.advance(1_000);
    }
    // Outside the window a rotated token is reuse: the family ends, its newest token with it.
    const next = (await b.auth.refresh({ refreshToken: current })).refreshToken!;
    clock.advance(10_001);
    await expect(a.auth.refresh({ refreshToken: current })).rejects.toMatchObject({ code: 'invalid_token' });
    await expect(b.auth.refresh({ refreshToken: next })).rejects.toMatchObject({ code: 'invalid_token' });
  });
});
