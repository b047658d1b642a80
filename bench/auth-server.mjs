// One server under test for bench/auth.mjs, in its own process. Started as
// `node bench/auth-server.mjs <target>` with BENCH_JWK (an Ed25519 private JWK
// shared by every target) and BENCH_TOKENS (refresh tokens to prepare); prints
// `READY <port> <fixtures>` (see bench/lib.mjs).
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { built, ready } from './lib.mjs';

export const ISSUER = 'https://bench.test';
export const AUDIENCE = 'bench';
export const USER = {
  name: 'Bench User',
  email: 'bench@example.test',
  password: 'Tangerine-Orbit-Velvet-4821',
};

const fromPackage = (pkg, name) =>
  createRequire(new URL(`../packages/${pkg}/package.json`, import.meta.url))(name);
const jose = fromPackage('core', 'jose');
const argon2 = fromPackage('core', '@node-rs/argon2');
const Fastify = fromPackage('fastify', 'fastify');

const jwk = JSON.parse(process.env.BENCH_JWK ?? 'null');
/** EdDSA unless BENCH_JWK names another algorithm (bench/example-apps.mjs measures ES256 too). */
const alg = jwk?.alg ?? 'EdDSA';
const tokenCount = Number(process.env.BENCH_TOKENS ?? 50);

/** Claims and header of Postern's access tokens (core/src/tokens), so both sides verify the same. */
const verifyOptions = {
  algorithms: [alg],
  issuer: ISSUER,
  audience: AUDIENCE,
  typ: 'at+jwt',
  clockTolerance: 30,
  requiredClaims: ['sub', 'exp', 'iat', 'jti', 'sid'],
};

async function signAccess(privateKey, sub, sid) {
  return new jose.SignJWT({ aud: AUDIENCE, sub, sid, jti: randomUUID(), auth_time: 0, amr: ['pwd'] })
    .setProtectedHeader({ alg, typ: 'at+jwt', kid: jwk.kid })
    .setIssuer(ISSUER)
    .setIssuedAt()
    .setExpirationTime('15m')
    .sign(privateKey);
}

/** Baselines: bare routes doing only the named work, no routing table, no stores. The work is
 *  framework-neutral (`[status, body]` out) and mounted on bare Fastify and on bare Express. */
async function bareWork() {
  const privateKey = await jose.importJWK(jwk, alg);
  const { d: _private, ...publicJwk } = jwk;
  const publicKey = await jose.importJWK(publicJwk, alg);
  const hash = await argon2.hash(USER.password, {
    algorithm: 2,
    memoryCost: 19456,
    timeCost: 2,
    parallelism: 1,
  });
  const families = new Map();
  const refreshTokens = [];
  for (let i = 0; i < tokenCount; i++) {
    const token = randomBytes(32).toString('base64url');
    families.set(createHash('sha256').update(token).digest('base64url'), { sub: 'u1', sid: randomUUID() });
    refreshTokens.push(token);
  }
  const accessToken = await signAccess(privateKey, 'u1', randomUUID());
  return {
    fixtures: { accessToken, refreshTokens },
    async me(authorization) {
      const m = /^Bearer (.+)$/.exec(authorization ?? '');
      try {
        const { payload } = await jose.jwtVerify(m?.[1] ?? '', publicKey, verifyOptions);
        return [200, { user: { id: payload.sub, email: USER.email, name: USER.name, roles: ['user'] } }];
      } catch {
        return [401, { code: 'invalid_token' }];
      }
    },
    async login(body) {
      const ok = await argon2.verify(hash, body.password);
      return ok ? [200, { ok }] : [401, { code: 'invalid_credentials' }];
    },
    async refresh(body) {
      const key = createHash('sha256').update(body.refreshToken).digest('base64url');
      const family = families.get(key);
      if (!family) return [401, { code: 'invalid_token' }];
      families.delete(key);
      const refreshToken = randomBytes(32).toString('base64url');
      families.set(createHash('sha256').update(refreshToken).digest('base64url'), family);
      const accessToken = await signAccess(privateKey, family.sub, family.sid);
      return [200, { accessToken, tokenType: 'Bearer', expiresIn: 900, refreshToken }];
    },
  };
}

async function bareFastify() {
  const work = await bareWork();
  const app = Fastify();
  const send = (reply, [status, body]) => reply.code(status).send(body);
  app.get('/auth/me', async (req, reply) => send(reply, await work.me(req.headers.authorization)));
  app.post('/auth/login', async (req, reply) => send(reply, await work.login(req.body)));
  app.post('/auth/refresh', async (req, reply) => send(reply, await work.refresh(req.body)));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { port: app.server.address().port, fixtures: work.fixtures };
}

async function bareExpress() {
  const work = await bareWork();
  const express = fromPackage('express', 'express');
  const app = express();
  app.use(express.json());
  const send = (res, [status, body]) => res.status(status).json(body);
  app.get('/auth/me', async (req, res) => send(res, await work.me(req.headers.authorization)));
  app.post('/auth/login', async (req, res) => send(res, await work.login(req.body)));
  app.post('/auth/refresh', async (req, res) => send(res, await work.refresh(req.body)));
  return { port: await listen(createServer(app)), fixtures: work.fixtures };
}

/** Postern with the bench key, limits out of the way, one user, a token and refresh tokens. */
async function postern() {
  const { createPostern } = await built('core');
  const high = { points: 1_000_000_000, durationSeconds: 1 };
  const ph = createPostern({
    issuer: ISSUER,
    audience: AUDIENCE,
    keys: [jwk],
    maxSessionsPerUser: 1_000_000,
    // `refresh:session` too: each prepared token's chain rotates thousands of times a run.
    throttle: {
      'login:email+ip': high,
      'login:email': high,
      'login:ip': high,
      'signup:ip': high,
      'refresh:session': high,
    },
  });
  await ph.auth.signup(USER);
  const login = (refreshToken) =>
    ph.auth.login({ email: USER.email, password: USER.password, refreshToken }, { ip: '127.0.0.1' });
  const { accessToken } = await login(false);
  const refreshTokens = [];
  for (let i = 0; i < tokenCount; i++) refreshTokens.push((await login(true)).refreshToken);
  return { ph, fixtures: { accessToken, refreshTokens } };
}

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

const targets = {
  bare: bareFastify,
  'bare express': bareExpress,
  'postern + fastify': async () => {
    const { ph, fixtures } = await postern();
    const { posternPlugin } = await built('fastify');
    const app = Fastify();
    await app.register(posternPlugin, { postern: ph });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { port: app.server.address().port, fixtures };
  },
  'postern + express': async () => {
    const { ph, fixtures } = await postern();
    const { posternRouter } = await built('express');
    const express = fromPackage('express', 'express');
    const app = express();
    app.use(posternRouter(ph));
    return { port: await listen(createServer(app)), fixtures };
  },
};

export const TARGETS = Object.keys(targets);

if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) {
  const target = process.argv[2];
  if (!(target in targets)) {
    console.error(`unknown target ${target}; one of: ${TARGETS.join(', ')}`);
    process.exit(2);
  }
  const { port, fixtures } = await targets[target]();
  ready(port, fixtures);
}
