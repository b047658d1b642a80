import { generateKeyPairSync, type KeyObject, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import fastifyJwt, { type TokenOrHeader } from '@fastify/jwt';
import { createPostern, type KeyInput, type Postern, silentLogger } from '@postern/core';
import { posternRouter, principalOf, requireAuth } from '@postern/express';
import { listen, TestClock } from '@postern/testkit';
import express from 'express';
import { expressjwt, type Request as JWTRequest } from 'express-jwt';
import { createVerifier } from 'fast-jwt';
import Fastify, { type FastifyRequest } from 'fastify';
import buildGetJwks from 'get-jwks';
import jwt, { type JwtHeader, type JwtPayload, type SigningKeyCallback } from 'jsonwebtoken';
import jwksClient, { expressJwtSecret } from 'jwks-rsa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// A Postern host on Express and, beside it, services that check its access tokens on their own
// against its JWK set, fetched over HTTP from `<issuer>/.well-known/jwks.json` with the issuer
// the host's origin: the set-ups of docs/verify-tokens.md, with the host's address for theirs.

const AUDIENCE = 'orders-api';
const PASSWORD = 'Tangerine-Orbit-Velvet-4821';

interface Host {
  issuer: string;
  ph: Postern;
  clock: TestClock;
  close(): Promise<void>;
}

/** The host as the docs have it: Postern first, the JWK set at the origin root too, a guarded
 *  route of its own. No `keys`: the default key. */
async function startHost(keys?: KeyInput): Promise<Host> {
  const server = createServer();
  const mounted = await listen(server);
  const issuer = mounted.url;
  const clock = new TestClock();
  const ph = createPostern({ issuer, audience: AUDIENCE, clock, logger: silentLogger, keys });
  const app = express();
  app.use(posternRouter(ph));
  app.get('/.well-known/jwks.json', async (_req, res) => {
    res.json(await ph.jwks());
  });
  app.get('/api/me', requireAuth(ph), (_req, res) => {
    res.json({ userId: principalOf(res).userId });
  });
  server.on('request', app);
  return {
    issuer,
    ph,
    clock,
    async close() {
      await mounted.close();
      await ph.close();
    },
  };
}

async function post(url: string, body: unknown, bearer?: string): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  return fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
}

/** A new user, logged in over HTTP: its user id and its first session's tokens. */
async function login(host: Host): Promise<{ userId: string; accessToken: string; refreshToken: string }> {
  const email = `u-${randomUUID()}@example.test`;
  const signup = await post(`${host.issuer}/auth/signup`, { name: 'U', email, password: PASSWORD });
  expect(signup.status).toBe(201);
  const { user } = (await signup.json()) as { user: { id: string } };
  const res = await post(`${host.issuer}/auth/login`, { email, password: PASSWORD, refreshToken: true });
  expect(res.status).toBe(200);
  return { userId: user.id, ...((await res.json()) as { accessToken: string; refreshToken: string }) };
}

type Alg = 'ES256' | 'EdDSA';

/** jsonwebtoken + jwks-rsa, as in the docs: resolves the claims or rejects. */
function jsonwebtokenVerifier(issuer: string, alg: Alg = 'ES256'): (token: string) => Promise<JwtPayload> {
  const client = jwksClient({ jwksUri: `${issuer}/.well-known/jwks.json`, cache: true, rateLimit: true });
  const getKey = (header: JwtHeader, callback: SigningKeyCallback) => {
    client.getSigningKey(header.kid, (err, key) => callback(err, key?.getPublicKey()));
  };
  return (token) =>
    new Promise((resolve, reject) => {
      jwt.verify(
        token,
        getKey,
        // jsonwebtoken's types list no EdDSA; the EdDSA case below shows what it answers.
        { algorithms: [alg as jwt.Algorithm], issuer, audience: AUDIENCE, complete: true },
        (err, decoded) => {
          if (err) reject(err);
          else if (decoded?.header.typ !== 'at+jwt' || typeof decoded.payload === 'string')
            reject(new Error('not an access token'));
          else resolve(decoded.payload);
        },
      );
    });
}

/** fast-jwt + get-jwks, as in the docs: keys only from the issuer, found by discovery. */
function fastJwtVerifier(
  issuer: string,
  alg: Alg = 'ES256',
): (token: string) => Promise<Record<string, unknown>> {
  const getJwks = buildGetJwks({ issuersWhitelist: [issuer] });
  return createVerifier({
    key: async ({ header, payload }: { header: { kid?: string; alg?: string }; payload: { iss?: string } }) =>
      getJwks.getPublicKey({ kid: header.kid, alg: header.alg, domain: payload.iss }),
    algorithms: [alg],
    allowedIss: issuer,
    allowedAud: AUDIENCE,
    checkTyp: 'at+jwt',
  });
}

/** An Express service guarded by express-jwt over jwks-rsa, as in the docs. */
async function startExpressService(issuer: string) {
  const app = express();
  app.use(
    '/api',
    expressjwt({
      secret: expressJwtSecret({ jwksUri: `${issuer}/.well-known/jwks.json`, cache: true, rateLimit: true }),
      algorithms: ['ES256'],
      issuer,
      audience: AUDIENCE,
      isRevoked: async (_req, token) => token?.header.typ !== 'at+jwt',
    }),
  );
  app.get('/api/orders', (req: JWTRequest, res) => {
    res.json({ userId: req.auth?.sub });
  });
  // express-jwt's refusals are UnauthorizedErrors carrying their status.
  app.use(
    (err: { status?: number }, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      res.status(err.status ?? 500).json({ error: String(err) });
    },
  );
  return listen(app);
}

/** A Fastify service guarded by @fastify/jwt over get-jwks, as in the docs. */
async function startFastifyService(issuer: string) {
  const getJwks = buildGetJwks({ issuersWhitelist: [issuer] });
  const app = Fastify();
  await app.register(fastifyJwt, {
    decode: { complete: true },
    // With `decode: { complete: true }` the function gets the whole token, not just its header.
    secret: async (_request: FastifyRequest, token: TokenOrHeader) => {
      if (!('payload' in token)) throw new Error('expected a complete token');
      return getJwks.getPublicKey({
        kid: token.header.kid,
        alg: token.header.alg,
        domain: token.payload.iss,
      });
    },
    verify: { algorithms: ['ES256'], allowedIss: issuer, allowedAud: AUDIENCE, checkTyp: 'at+jwt' },
  });
  app.addHook('onRequest', async (request, reply) => {
    try {
      await request.jwtVerify();
    } catch {
      // @fastify/jwt passes some refusals on as they are, which Fastify answers 500 (a wrong
      // `typ`, a key it could not fetch, such as one of an issuer not listed): all are 401 here.
      return reply.code(401).send({ error: 'invalid_token' });
    }
  });
  app.get('/api/orders', (request) => ({ userId: (request.user as { sub: string }).sub }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, close: () => app.close() };
}

const orders = (service: { url: string }, bearer?: string) =>
  fetch(`${service.url}/api/orders`, bearer ? { headers: { authorization: `Bearer ${bearer}` } } : {});

/** A token like Postern's access tokens (by default the host's `iss` and `aud`, an `at+jwt`
 *  header), signed by `key` under `kid`. */
function forged(
  host: Host,
  userId: string,
  key: KeyObject,
  kid: string,
  { typ = 'at+jwt', aud = AUDIENCE, iss = host.issuer } = {},
): string {
  const now = Math.floor(Date.now() / 1000);
  return jwt.sign({ sub: userId, sid: randomUUID(), jti: randomUUID(), auth_time: now, amr: ['pwd'] }, key, {
    algorithm: 'ES256',
    header: { alg: 'ES256', typ, kid },
    issuer: iss,
    audience: aud,
    expiresIn: 900,
  });
}

type Service = { url: string; close(): Promise<void> };

/** Both stacks, bare and under their framework, set up for `host`. */
async function otherServices(host: Host) {
  const verifiers: Array<[string, (token: string) => Promise<Record<string, unknown>>]> = [
    ['jsonwebtoken + jwks-rsa', jsonwebtokenVerifier(host.issuer)],
    ['fast-jwt + get-jwks', fastJwtVerifier(host.issuer)],
  ];
  const services: Array<[string, Service]> = [
    ['express-jwt (jsonwebtoken + jwks-rsa)', await startExpressService(host.issuer)],
    ['@fastify/jwt (fast-jwt + get-jwks)', await startFastifyService(host.issuer)],
  ];
  return {
    verifiers,
    services,
    async close() {
      for (const [, service] of services) await service.close();
    },
  };
}

describe('access tokens of the default key, verified by other services against the JWK set', () => {
  let host: Host;
  let others: Awaited<ReturnType<typeof otherServices>>;
  let verifiers: typeof others.verifiers;
  let services: typeof others.services;

  beforeAll(async () => {
    host = await startHost();
    others = await otherServices(host);
    ({ verifiers, services } = others);
  });
  afterAll(async () => {
    await others?.close();
    await host?.close();
  });

  it('the host publishes one ES256 key at <issuer>/.well-known/jwks.json, as at /auth/.well-known/jwks.json', async () => {
    const root = await (await fetch(`${host.issuer}/.well-known/jwks.json`)).json();
    expect(root).toEqual(await (await fetch(`${host.issuer}/auth/.well-known/jwks.json`)).json());
    expect(root).toEqual({
      keys: [expect.objectContaining({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' })],
    });
  });

  it('both stacks verify a fresh access token and read its claims', async () => {
    const { userId, accessToken } = await login(host);
    for (const [name, verify] of verifiers) {
      const claims = await verify(accessToken);
      expect(claims, name).toMatchObject({
        iss: host.issuer,
        aud: AUDIENCE,
        sub: userId,
        sid: expect.any(String),
      });
    }
  });

  it('both framework services let the token through, and refuse no token with 401', async () => {
    const { userId, accessToken } = await login(host);
    for (const [name, service] of services) {
      const ok = await orders(service, accessToken);
      expect(ok.status, name).toBe(200);
      expect(await ok.json(), name).toEqual({ userId });
      expect((await orders(service)).status, name).toBe(401);
    }
  });

  it('both stacks refuse a token signed by another key under the same kid, and the services answer 401', async () => {
    const { userId } = await login(host);
    const { keys } = await host.ph.jwks();
    const token = forged(
      host,
      userId,
      generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
      keys[0]!.kid!,
    );
    for (const [name, verify] of verifiers) await expect(verify(token), name).rejects.toThrow();
    for (const [name, service] of services) expect((await orders(service, token)).status, name).toBe(401);
  });

  it('a token naming another issuer is refused, and nobody fetches keys from the server it names', async () => {
    const { userId } = await login(host);
    const stranger = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = {
      ...stranger.publicKey.export({ format: 'jwk' }),
      kid: 'stranger',
      alg: 'ES256',
      use: 'sig',
    };
    let fetched = 0;
    const keyServer = await listen((_req, res) => {
      fetched += 1;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    try {
      const token = forged(host, userId, stranger.privateKey, 'stranger', { iss: keyServer.url });
      for (const [name, verify] of verifiers) await expect(verify(token), name).rejects.toThrow();
      for (const [name, service] of services) expect((await orders(service, token)).status, name).toBe(401);
      // get-jwks refused the issuer before any request: `issuersWhitelist` is what keeps it home.
      expect(fetched).toBe(0);
    } finally {
      await keyServer.close();
    }
  });

  it('both stacks refuse an expired token: the lifetime bounds what they cannot see', async () => {
    // Issued 16 minutes ago: its 15-minute lifetime is over.
    host.clock.set(Date.now() - 16 * 60_000);
    const { accessToken } = await login(host);
    host.clock.set(Date.now());
    for (const [name, verify] of verifiers)
      await expect(verify(accessToken), name).rejects.toThrow(/expired/i);
    for (const [name, service] of services)
      expect((await orders(service, accessToken)).status, name).toBe(401);
  });

  it('after a logout, Postern refuses the access token at once; the other services accept it until it expires', async () => {
    const { accessToken, refreshToken } = await login(host);
    expect((await post(`${host.issuer}/auth/logout`, { refreshToken }, accessToken)).status).toBe(204);
    const guarded = await fetch(`${host.issuer}/api/me`, {
      headers: { authorization: `Bearer ${accessToken}` },
    });
    expect(guarded.status).toBe(401);
    const me = await fetch(`${host.issuer}/auth/me`, { headers: { authorization: `Bearer ${accessToken}` } });
    expect(me.status).toBe(401);
    for (const [name, verify] of verifiers) await expect(verify(accessToken), name).resolves.toBeTruthy();
    for (const [name, service] of services)
      expect((await orders(service, accessToken)).status, name).toBe(200);
  });
});

describe('a token of the right key, issuer and audience that is not an access token', () => {
  const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  let host: Host;
  let others: Awaited<ReturnType<typeof otherServices>>;
  beforeAll(async () => {
    host = await startHost(key);
    others = await otherServices(host);
  });
  afterAll(async () => {
    await others?.close();
    await host?.close();
  });

  it('is refused by both stacks and both services for its typ alone (the docs pin at+jwt)', async () => {
    const { userId } = await login(host);
    const { kid } = (await host.ph.jwks()).keys[0]!;
    // The same token as an access token passes everywhere: only the header differs below.
    const access = forged(host, userId, key, kid!);
    for (const [name, verify] of others.verifiers) await expect(verify(access), name).resolves.toBeTruthy();
    for (const [name, service] of others.services)
      expect((await orders(service, access)).status, name).toBe(200);
    for (const typ of ['JWT', 'mfa+jwt']) {
      const token = forged(host, userId, key, kid!, { typ });
      for (const [name, verify] of others.verifiers)
        await expect(verify(token), `${name} ${typ}`).rejects.toThrow();
      for (const [name, service] of others.services)
        expect((await orders(service, token)).status, `${name} ${typ}`).toBe(401);
    }
  });

  it('a pending-login token (mfa+jwt, audience <audience>:mfa) is refused everywhere', async () => {
    const { userId } = await login(host);
    const { kid } = (await host.ph.jwks()).keys[0]!;
    const pending = forged(host, userId, key, kid!, { typ: 'mfa+jwt', aud: `${AUDIENCE}:mfa` });
    for (const [name, verify] of others.verifiers) await expect(verify(pending), name).rejects.toThrow();
    for (const [name, service] of others.services)
      expect((await orders(service, pending)).status, name).toBe(401);
  });
});

describe('an EdDSA key, which these stacks cannot read (what docs/verify-tokens.md says)', () => {
  let host: Host;
  beforeAll(async () => {
    host = await startHost(generateKeyPairSync('ed25519').privateKey);
  });
  afterAll(() => host?.close());

  it('jsonwebtoken (over jwks-rsa) answers Unknown key type "ed25519", get-jwks Unsupported key type "OKP"', async () => {
    const { accessToken } = await login(host);
    await expect(jsonwebtokenVerifier(host.issuer, 'EdDSA')(accessToken)).rejects.toThrow(
      'Unknown key type "ed25519"',
    );
    // fast-jwt wraps what the key function threw.
    await expect(fastJwtVerifier(host.issuer, 'EdDSA')(accessToken)).rejects.toMatchObject({
      message: 'Cannot fetch key.',
      originalError: { message: 'Unsupported key type "OKP"' },
    });
    // Not a broken token: Postern itself accepts it.
    await expect(host.ph.auth.verifyAccessToken(accessToken)).resolves.toBeTruthy();
  });
});
