import { execFileSync, spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, createKeyring, silentLogger, systemClock } from '@postern/core';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { NO_SERVER_REASON, schemaName, serverUrl } from '../../../packages/postgres/test/helpers/test-db.js';
import { type Env, readConfig, runWorker } from '../src/index.js';

const script = fileURLToPath(new URL('../scripts/generate-key.mjs', import.meta.url));
const generateKey = (...args: string[]) =>
  execFileSync(process.execPath, [script, ...args], { encoding: 'utf8' }).trim();
const ed25519 = (kid?: string) => ({
  ...generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' }),
  ...(kid ? { kid } : {}),
});
const base: Env = { PORT: '0', ORIGIN: 'http://localhost:3000', WORKERS: '0', LOG_LEVEL: 'warn' };

/** readConfig with stdout captured: the example logger writes JSON lines there. */
async function withLogs(env: Env): Promise<{ lines: Array<Record<string, unknown>>; error?: unknown }> {
  const out: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out.push(String(chunk));
    return true;
  });
  let error: unknown;
  try {
    const config = await readConfig(env);
    await config.close();
  } catch (err) {
    error = err;
  } finally {
    spy.mockRestore();
  }
  const lines = out
    .join('')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { lines, error };
}

describe('JWT signing keys from the environment', () => {
  it.each([
    ['no argument', [], { kty: 'EC', crv: 'P-256', alg: 'ES256' }],
    ['EdDSA', ['EdDSA'], { kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA' }],
  ])(
    'generate-key (%s) prints a private JWK whose kid is the thumbprint the keyring computes',
    async (_, args, shape) => {
      const jwk = JSON.parse(generateKey(...args)) as Record<string, string>;
      expect(jwk).toMatchObject(shape);
      expect(jwk.d).toMatch(/^[\w-]{43}$/);
      const { kid, ...noKid } = jwk;
      const keyring = createKeyring({ keys: noKid, issuer: 'x', logger: silentLogger, clock: systemClock });
      expect(await keyring.alg).toBe(shape.alg);
      expect((await keyring.jwks()).keys[0]!.kid).toBe(kid);
      // Two runs, two keys.
      expect(JSON.parse(generateKey(...args)).kid).not.toBe(kid);
    },
  );

  it('generate-key refuses an algorithm it does not make', () => {
    const run = spawnSync(process.execPath, [script, 'RS256'], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/usage: generate-key\.mjs \[ES256\|EdDSA\]/);
  });

  it('accepts a JWK, a JWK set (first signs, the rest verify) and a key file', async () => {
    const jwk = generateKey();
    expect((await readConfig({ ...base, JWT_PRIVATE_KEYS: jwk })).postern.keys).toEqual([JSON.parse(jwk)]);

    // Rotation: the old key may be given as its public half only.
    const { d: _d, ...oldPublic } = JSON.parse(generateKey()) as Record<string, string>;
    const set = JSON.stringify({ keys: [JSON.parse(jwk), oldPublic] });
    expect((await readConfig({ ...base, JWT_PRIVATE_KEYS: set })).postern.keys).toHaveLength(2);

    const dir = await mkdtemp(join(tmpdir(), 'postern-keys-'));
    try {
      await writeFile(join(dir, 'jwks.json'), `${set}\n`);
      const config = await readConfig({ ...base, JWT_PRIVATE_KEYS_FILE: join(dir, 'jwks.json') });
      expect(config.postern.keys).toEqual(JSON.parse(set).keys);
    } finally {
      await rm(dir, { recursive: true });
    }
  });

  const secretD = ed25519().d!;
  const bad: Array<[string, Env, RegExp]> = [
    ['not JSON', { JWT_PRIVATE_KEYS: `{"kty":"OKP","d":"${secretD}"` }, /JWT_PRIVATE_KEYS is not valid JSON/],
    ['an empty set', { JWT_PRIVATE_KEYS: '{"keys":[]}' }, /at least one key/],
    ['keys not a list', { JWT_PRIVATE_KEYS: '{"keys":{}}' }, /at least one key/],
    ['a list instead of a set', { JWT_PRIVATE_KEYS: '[]' }, /key 1 is not a JWK/],
    ['no kty', { JWT_PRIVATE_KEYS: '{"keys":[{"crv":"Ed25519"}]}' }, /key 1 is not a JWK \(no "kty"\)/],
    [
      'a public key first',
      { JWT_PRIVATE_KEYS: JSON.stringify({ ...ed25519(), d: undefined }) },
      /unusable signing key: The first key must be a private/,
    ],
    [
      'a broken private key',
      { JWT_PRIVATE_KEYS: JSON.stringify({ ...ed25519(), d: 'AAAA' }) },
      /JWT_PRIVATE_KEYS: unusable signing key/,
    ],
    [
      // Loads, but cannot sign: only the test signature at start-up finds it.
      'an ES256 key on the wrong curve',
      {
        JWT_PRIVATE_KEYS: JSON.stringify({
          ...generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({ format: 'jwk' }),
          alg: 'ES256',
        }),
      },
      /unusable signing key/,
    ],
    [
      'a short HS256 secret',
      { JWT_PRIVATE_KEYS: JSON.stringify({ kty: 'oct', k: randomBytes(16).toString('base64url') }) },
      /at least 32 bytes/,
    ],
    [
      'an RSA key',
      {
        JWT_PRIVATE_KEYS: JSON.stringify(
          generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }),
        ),
      },
      /Unsupported key: kty=RSA/,
    ],
    [
      'two algorithms',
      {
        JWT_PRIVATE_KEYS: JSON.stringify({
          keys: [
            ed25519(),
            generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }),
          ],
        }),
      },
      /one algorithm/,
    ],
    [
      'a repeated kid',
      { JWT_PRIVATE_KEYS: JSON.stringify({ keys: [ed25519('k1'), ed25519('k1')] }) },
      /"k1" is used twice/,
    ],
    ['a missing file', { JWT_PRIVATE_KEYS_FILE: '/nonexistent/jwks.json' }, /cannot be read: ENOENT/],
    ['both variables', { JWT_PRIVATE_KEYS: '{}', JWT_PRIVATE_KEYS_FILE: '/x' }, /not both/],
  ];
  it.each(bad)('refuses %s at start-up with a ConfigError', async (_what, vars, message) => {
    const error = await readConfig({ ...base, ...vars }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
    // Never echoes the secret.
    expect((error as Error).message).not.toContain(secretD);
  });

  it('warns about missing keys where an ephemeral key hurts, and only there', async () => {
    const warned = (lines: Array<Record<string, unknown>>) =>
      lines.some((l) => l.reason === 'no_signing_keys');
    expect(warned((await withLogs(base)).lines)).toBe(false);
    expect(warned((await withLogs({ ...base, ORIGIN: 'http://127.0.0.1:3000' })).lines)).toBe(false);
    expect(warned((await withLogs({ ...base, NODE_ENV: 'production' })).lines)).toBe(true);
    expect(warned((await withLogs({ ...base, ORIGIN: 'https://app.example' })).lines)).toBe(true);
    const configured = await withLogs({ ...base, NODE_ENV: 'production', JWT_PRIVATE_KEYS: generateKey() });
    expect(configured.error).toBeUndefined();
    expect(warned(configured.lines)).toBe(false);
  });

  it('warns about a missing MFA_ENCRYPTION_KEY where one key must serve every instance', async () => {
    const warned = (lines: Array<Record<string, unknown>>) =>
      lines.some((l) => l.reason === 'no_mfa_encryption_key');
    expect(warned((await withLogs(base)).lines)).toBe(false);
    expect(warned((await withLogs({ ...base, NODE_ENV: 'production' })).lines)).toBe(true);
    const mfaKey = randomBytes(32).toString('base64');
    const configured = await withLogs({ ...base, NODE_ENV: 'production', MFA_ENCRYPTION_KEY: mfaKey });
    expect(configured.error).toBeUndefined();
    expect(warned(configured.lines)).toBe(false);
  });
});

const server = await serverUrl();

describe.skipIf(!server)(`DATABASE_SCHEMA${server ? '' : ` (skipped: ${NO_SERVER_REASON})`}`, () => {
  const pool = new pg.Pool({ connectionString: server ?? undefined, max: 2 });
  const schemas: string[] = [];
  const fresh = () => {
    const s = schemaName('examples_config');
    schemas.push(s);
    return s;
  };
  const tablesIn = async (schema: string) =>
    (await pool.query('SELECT tablename FROM pg_tables WHERE schemaname = $1', [schema])).rows.map(
      (r: { tablename: string }) => r.tablename,
    );

  beforeAll(() => {
    pool.on('error', () => {});
  });
  afterEach(async () => {
    for (const s of schemas.splice(0)) await pool.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
  });
  afterAll(() => pool.end());

  it('is ignored without DATABASE_URL', async () => {
    const config = await readConfig({ ...base, DATABASE_SCHEMA: 'Not-Valid' });
    expect(config.postern.stores).toBeUndefined();
    await config.close();
  });

  it('refuses a schema name Postgres would fold or quote, naming the variable', async () => {
    const error = await readConfig({ ...base, DATABASE_URL: server!, DATABASE_SCHEMA: 'Bad-Name' }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/DATABASE_SCHEMA: schema must match/);
  });

  it('warns that attachments stay in one process when the database is shared but FILES_DIR is not set', async () => {
    const warned = (lines: Array<Record<string, unknown>>) =>
      lines.some((l) => l.reason === 'files_in_memory');
    const shared = { ...base, DATABASE_URL: server!, DATABASE_SCHEMA: fresh() };
    expect(warned((await withLogs(shared)).lines)).toBe(true);
    const dir = await mkdtemp(join(tmpdir(), 'postern-files-'));
    try {
      const configured = await withLogs({ ...shared, FILES_DIR: dir });
      expect(configured.error).toBeUndefined();
      expect(warned(configured.lines)).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    expect(warned((await withLogs(base)).lines)).toBe(false);
  });

  it('puts the worker on the same schema', async () => {
    const schema = fresh();
    const worker = await runWorker({ ...base, DATABASE_URL: server!, DATABASE_SCHEMA: schema, WORKERS: '1' });
    try {
      expect(await tablesIn(schema)).toEqual(
        expect.arrayContaining(['postern_migrations', 'outbox_events', 'users']),
      );
    } finally {
      await worker.close();
    }
  });
});

describe('browser sessions and token lifetime', () => {
  it('turns cookie sessions on for ORIGIN and reads ACCESS_TOKEN_TTL_SECONDS (default 900)', async () => {
    const config = await readConfig({ ...base, ORIGIN: 'https://app.example' });
    expect(config.postern.cookieSessions).toEqual({ trustedOrigins: ['https://app.example'] });
    expect(config.postern.accessTokenTtlSeconds).toBe(900);
    await config.close();
    const short = await readConfig({ ...base, ACCESS_TOKEN_TTL_SECONDS: '5' });
    expect(short.postern.accessTokenTtlSeconds).toBe(5);
    expect(short.postern.cookieSessions?.trustedOrigins).toEqual(['http://localhost:3000']);
    await short.close();
  });

  it('refuses an ACCESS_TOKEN_TTL_SECONDS that is not a whole number of seconds up to a day, naming it', async () => {
    for (const bad of ['0', '-1', '1.5', 'soon', '86401'])
      await expect(readConfig({ ...base, ACCESS_TOKEN_TTL_SECONDS: bad })).rejects.toThrow(
        /ACCESS_TOKEN_TTL_SECONDS/,
      );
  });
});

describe('TRUSTED_PROXIES', () => {
  it('lists addresses and ranges separated by commas or spaces; none by default', async () => {
    const listed = await readConfig({ ...base, TRUSTED_PROXIES: ' 10.0.0.0/8, ::1  192.0.2.7,' });
    expect(listed.postern.trustedProxies).toEqual(['10.0.0.0/8', '::1', '192.0.2.7']);
    await listed.close();
    const none = await readConfig(base);
    expect(none.postern.trustedProxies).toEqual([]);
    await none.close();
  });
});
