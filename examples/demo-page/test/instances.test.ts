import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '@postern/core';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_SERVER_REASON, schemaName, serverUrl } from '../../../packages/postgres/test/helpers/test-db.js';
import { startApp as startExpress } from '../../express-app/src/app.js';
import { startApp as startFastify } from '../../fastify-app/src/app.js';
import type { Env } from '../src/index.js';
import { TEST_ENV } from './example-app.js';

// The README's "Scaling out": app instances on one database (and DATABASE_SCHEMA) accept each
// other's access tokens exactly when they share JWT_PRIVATE_KEYS. One Express and one Fastify
// instance, so the two examples are also shown to read the same variables.

type App = Awaited<ReturnType<typeof startExpress>>;
const script = fileURLToPath(new URL('../scripts/generate-key.mjs', import.meta.url));
const generateKey = () => execFileSync(process.execPath, [script], { encoding: 'utf8' }).trim();
const server = await serverUrl();

describe('example apps: a bad key stops start-up', () => {
  for (const [name, start] of [
    ['Express', startExpress],
    ['Fastify', startFastify],
  ] as const) {
    it(`${name}`, async () => {
      const env: Env = { PORT: '0', WORKERS: '0', LOG_LEVEL: 'error', JWT_PRIVATE_KEYS: '{"kty":"OKP"}' };
      const error = await start(env).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(/^JWT_PRIVATE_KEYS: unusable signing key/);
    });
  }
});

describe.skipIf(!server)(
  `example app instances on one Postgres schema${server ? '' : ` (skipped: ${NO_SERVER_REASON})`}`,
  () => {
    const schema = schemaName('examples_instances');
    const env: Env = { ...TEST_ENV, DATABASE_URL: server ?? undefined, DATABASE_SCHEMA: schema };
    const key = generateKey();
    const pool = new pg.Pool({ connectionString: server ?? undefined, max: 1 });
    const apps: App[] = [];
    const start = async (startApp: typeof startExpress, vars: Env) => {
      const app = await startApp({ ...env, ...vars });
      apps.push(app);
      return app;
    };
    const password = 'Tangerine-Orbit-Velvet-4821';
    const post = (app: App, path: string, body: unknown) =>
      fetch(app.url + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const login = async (app: App, email: string) => {
      const res = await post(app, '/auth/login', { email, password });
      expect(res.status).toBe(200);
      return ((await res.json()) as { accessToken: string }).accessToken;
    };
    const me = (app: App, token: string) =>
      fetch(`${app.url}/auth/me`, { headers: { authorization: `Bearer ${token}` } });
    const refused = async (app: App, token: string) => {
      const res = await me(app, token);
      expect(res.status).toBe(401);
      expect(((await res.json()) as { code: string }).code).toBe('invalid_token');
    };

    let a: App;
    let b: App;
    const email = `instances-${randomUUID()}@example.test`;
    beforeAll(async () => {
      pool.on('error', () => {});
      a = await start(startExpress, { JWT_PRIVATE_KEYS: key });
      b = await start(startFastify, { JWT_PRIVATE_KEYS: key });
      expect((await post(a, '/auth/signup', { name: 'Instances', email, password })).status).toBe(201);
    });
    afterAll(async () => {
      for (const app of apps) await app.close();
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    });

    it('keeps the tables in DATABASE_SCHEMA', async () => {
      const users = await pool.query(`SELECT email FROM "${schema}".users WHERE email = $1`, [email]);
      expect(users.rowCount).toBe(1);
    });

    it('accepts the access tokens of an instance with the same key, both ways', async () => {
      for (const [from, to] of [
        [a, b],
        [b, a],
      ] as const) {
        const res = await me(to, await login(from, email));
        expect(res.status).toBe(200);
        expect(((await res.json()) as { user: { email: string } }).user.email).toBe(email);
      }
      const jwks = async (app: App) => (await fetch(`${app.url}/auth/.well-known/jwks.json`)).json();
      expect(await jwks(b)).toEqual(await jwks(a));
    });

    it('refuses the access tokens of an instance with another key or with none', async () => {
      const other = await start(startFastify, { JWT_PRIVATE_KEYS: generateKey() });
      const none = await start(startExpress, {});
      const token = await login(a, email);
      await refused(other, token);
      await refused(none, token);
      await refused(a, await login(other, email));
      await refused(b, await login(none, email));
    });

    it('rotates: a new key signs while the old one still verifies', async () => {
      const rotated = await start(startExpress, {
        JWT_PRIVATE_KEYS: JSON.stringify({ keys: [JSON.parse(generateKey()), JSON.parse(key)] }),
      });
      // Tokens of the old key stay valid on the rotated instance ...
      expect((await me(rotated, await login(a, email))).status).toBe(200);
      // ... while instances that do not know the new key yet refuse its tokens.
      await refused(b, await login(rotated, email));
    });
  },
);
