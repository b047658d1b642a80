// One process under test for bench/postgres.mjs. Started as
// `node bench/postgres-server.mjs <target>` with BENCH_DATABASE_URL and BENCH_SCHEMA
// (a schema of its own, dropped by the parent), BENCH_JWK and BENCH_TOKENS for refresh targets,
// BENCH_JOBS for drain targets. HTTP targets print `READY <port> <fixtures>`; drain targets
// seed their jobs, drain them and print `READY 0 <{ jobs, ms }>`.
import { createHash, createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { built, ready } from './lib.mjs';

export const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
export const ISSUER = 'https://bench.test';
export const AUDIENCE = 'bench';
const MiB = 1024 * 1024;
/** Pool size of every target: the same connections for Postern and its baselines. */
const POOL_MAX = 10;
/** Outbox deliveries at once, and pg-boss jobs fetched at once. */
export const DRAIN_CONCURRENCY = 50;

const fromPackage = (pkg, name) =>
  createRequire(new URL(`../packages/${pkg}/package.json`, import.meta.url))(name);
const rootRequire = createRequire(new URL('../package.json', import.meta.url));
const pg = fromPackage('postgres', 'pg');
const jose = fromPackage('core', 'jose');
const Fastify = fromPackage('fastify', 'fastify');

const url = process.env.BENCH_DATABASE_URL;
const schema = process.env.BENCH_SCHEMA;
const pool = () => new pg.Pool({ connectionString: url, max: POOL_MAX });

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

// ---------------------------------------------------------------- intake

/** Baseline: a bare Fastify route doing the Standard Webhooks HMAC check and one INSERT of the
 *  raw body (deduplicated on the webhook id, as Postern does), nothing else. */
async function bareIntake() {
  const db = pool();
  await db.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await db.query(
    `CREATE TABLE "${schema}".events (id text PRIMARY KEY, dedupe_key text UNIQUE, payload text NOT NULL, created_at timestamptz NOT NULL)`,
  );
  const app = Fastify({ bodyLimit: 10 * MiB });
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  const key = Buffer.from(SECRET.slice(6), 'base64');
  app.post('/inbox/webhook', async (request, reply) => {
    const h = request.headers;
    const id = h['webhook-id'];
    const ts = h['webhook-timestamp'];
    const sigs = h['webhook-signature'];
    if (
      typeof id !== 'string' ||
      typeof ts !== 'string' ||
      typeof sigs !== 'string' ||
      !/^\d{1,12}$/.test(ts)
    ) {
      return reply.code(401).send({ code: 'webhook_signature_invalid' });
    }
    if (Math.abs(Date.now() / 1000 - Number(ts)) > 300)
      return reply.code(401).send({ code: 'webhook_signature_invalid' });
    const expected = createHmac('sha256', key).update(`${id}.${ts}.`).update(request.body).digest();
    const ok = sigs.split(' ').some((entry) => {
      if (!entry.startsWith('v1,')) return false;
      const sig = Buffer.from(entry.slice(3), 'base64');
      return sig.length === 32 && timingSafeEqual(sig, expected);
    });
    if (!ok) return reply.code(401).send({ code: 'webhook_signature_invalid' });
    const r = await db.query(
      `INSERT INTO "${schema}".events (id, dedupe_key, payload, created_at) VALUES ($1, $2, $3, now())
       ON CONFLICT (dedupe_key) DO NOTHING RETURNING id`,
      [randomUUID(), id, request.body.toString('utf8')],
    );
    return reply.code(202).send({ accepted: true, outboxEventId: r.rows[0]?.id ?? null });
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { port: app.server.address().port };
}

/** Postern on Postgres stores in this process's schema (migrated here). */
async function postern(extra = {}) {
  const { createPostern } = await built('core');
  const { migrate, postgresStores } = await built('postgres');
  const db = pool();
  await migrate(db, { schema });
  const stores = postgresStores({ pool: db, schema });
  const ph = createPostern({
    issuer: ISSUER,
    audience: AUDIENCE,
    stores,
    settings: { 'inbox.mail.webhook-secret': SECRET },
    ...extra,
  });
  return { ph, stores };
}

async function mount(adapter, ph) {
  if (adapter === 'fastify') {
    const { posternPlugin } = await built('fastify');
    const app = Fastify({ bodyLimit: 10 * MiB });
    await app.register(posternPlugin, { postern: ph });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return app.server.address().port;
  }
  if (adapter === 'node:http') {
    // No framework: the neutral handler straight on node:http (what an adapter costs shows here).
    return listen(
      createServer(async (req, res) => {
        const out = await ph.handle({
          method: req.method,
          path: req.url,
          headers: req.headers,
          body: req,
          ip: req.socket.remoteAddress,
        });
        if (!out) return res.writeHead(404).end();
        res.writeHead(out.status, out.headers).end(out.body ?? undefined);
      }),
    );
  }
  const { posternRouter } = await built('express');
  const express = fromPackage('express', 'express');
  const app = express();
  app.use(posternRouter(ph));
  return listen(createServer(app));
}

// ---------------------------------------------------------------- refresh

const jwk = JSON.parse(process.env.BENCH_JWK ?? 'null');
const tokenCount = Number(process.env.BENCH_TOKENS ?? 200);

/** Baseline: SHA-256 of the token, one `UPDATE ... RETURNING` that swaps it for its successor
 *  (only while unused), and a jose sign of the access token. */
async function bareRefresh() {
  const db = pool();
  await db.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await db.query(
    `CREATE TABLE "${schema}".refresh (hash text PRIMARY KEY, sub text NOT NULL, sid text NOT NULL)`,
  );
  const privateKey = await jose.importJWK(jwk, 'EdDSA');
  const sha = (t) => createHash('sha256').update(t).digest('base64url');
  const refreshTokens = [];
  for (let i = 0; i < tokenCount; i++) {
    const token = randomBytes(32).toString('base64url');
    await db.query(`INSERT INTO "${schema}".refresh VALUES ($1, 'u1', $2)`, [sha(token), randomUUID()]);
    refreshTokens.push(token);
  }
  const app = Fastify();
  app.post('/auth/refresh', async (request, reply) => {
    const next = randomBytes(32).toString('base64url');
    const r = await db.query(`UPDATE "${schema}".refresh SET hash = $2 WHERE hash = $1 RETURNING sub, sid`, [
      sha(request.body.refreshToken),
      sha(next),
    ]);
    const row = r.rows[0];
    if (!row) return reply.code(401).send({ code: 'invalid_token' });
    const accessToken = await new jose.SignJWT({
      aud: AUDIENCE,
      sub: row.sub,
      sid: row.sid,
      jti: randomUUID(),
    })
      .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: jwk.kid })
      .setIssuer(ISSUER)
      .setIssuedAt()
      .setExpirationTime('15m')
      .sign(privateKey);
    return { accessToken, tokenType: 'Bearer', expiresIn: 900, refreshToken: next };
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { port: app.server.address().port, fixtures: { refreshTokens } };
}

/** Postern on Postgres with one user and `tokenCount` sessions, each with a refresh token. */
async function posternRefresh(adapter) {
  const { ph, stores } = await postern({
    keys: [jwk],
    maxSessionsPerUser: 1_000_000,
    // Each prepared token's chain rotates thousands of times a run.
    throttle: { 'refresh:session': { points: 1_000_000_000, durationSeconds: 1 } },
  });
  const { user } = await ph.auth.signup({
    name: 'Bench User',
    email: 'bench@example.test',
    password: 'Tangerine-Orbit-Velvet-4821',
  });
  const refreshTokens = [];
  const now = new Date();
  for (let i = 0; i < tokenCount; i++) {
    const token = randomBytes(32).toString('base64url');
    const day = 86_400_000;
    await stores.sessions.create(
      {
        id: randomUUID(),
        userId: user.id,
        createdAt: now,
        expiresAt: new Date(now.getTime() + 30 * day),
        idleExpiresAt: new Date(now.getTime() + 7 * day),
        lastUsedAt: now,
        authTime: now,
        amr: ['pwd'],
        ip: '127.0.0.1',
        userAgent: null,
        endedAt: null,
        endReason: null,
      },
      {
        hash: createHash('sha256').update(token).digest('base64url'),
        idleExpiresAt: new Date(now.getTime() + 7 * day),
      },
      { maxPerUser: 1_000_000 },
    );
    refreshTokens.push(token);
  }
  return { port: await mount(adapter, ph), fixtures: { refreshTokens } };
}

// ---------------------------------------------------------------- drain

const jobs = Number(process.env.BENCH_JOBS ?? 20_000);

async function waitFor(check) {
  while (!(await check())) await new Promise((r) => setTimeout(r, 20));
}

/** The Postern outbox: `jobs` pending events of a name with a no-op consumer, drained by one
 *  process's workers, `concurrency` deliveries at once. */
async function drainPostern(concurrency) {
  const { ph } = await postern({ outbox: { concurrency } });
  const db = pool();
  await db.query(
    `INSERT INTO "${schema}".outbox_events (id, name, payload, available_at, created_at)
     SELECT gen_random_uuid()::text, 'bench.noop', '{}', now() - interval '1 second', now()
     FROM generate_series(1, $1)`,
    [jobs],
  );
  let seen = 0;
  ph.outbox.subscribe('bench.noop', async () => {
    seen += 1;
  });
  const start = performance.now();
  ph.outbox.start();
  await waitFor(async () => seen >= jobs);
  await waitFor(
    async () =>
      (await db.query(`SELECT count(*)::int AS n FROM "${schema}".outbox_events WHERE status = 'done'`))
        .rows[0].n >= jobs,
  );
  const ms = performance.now() - start;
  await ph.close();
  return { jobs, ms };
}

/** pg-boss (newest release for Node 20) draining the same number of no-op jobs on the same
 *  database with `loops` `work()` loops of `batchSize` jobs per fetch (pg-boss 10 waits its
 *  polling interval, 0.5 s at least, between fetches of one loop, so throughput comes from
 *  batches and loops). */
async function drainPgBoss(loops, batchSize) {
  const PgBoss = rootRequire('pg-boss');
  const boss = new PgBoss({
    connectionString: url,
    schema,
    max: POOL_MAX,
    supervise: false,
    schedule: false,
  });
  boss.on('error', () => {});
  await boss.start();
  const name = 'bench-noop';
  await boss.createQueue(name);
  for (let i = 0; i < jobs; i += 1000) {
    await boss.insert(Array.from({ length: Math.min(1000, jobs - i) }, () => ({ name, data: {} })));
  }
  let seen = 0;
  const start = performance.now();
  const handler = async (batchJobs) => {
    seen += batchJobs.length;
  };
  for (let i = 0; i < loops; i++) await boss.work(name, { batchSize, pollingIntervalSeconds: 0.5 }, handler);
  const db = pool();
  await waitFor(async () => seen >= jobs);
  await waitFor(
    async () =>
      (
        await db.query(
          `SELECT count(*)::int AS n FROM "${schema}".job WHERE name = $1 AND state = 'completed'`,
          [name],
        )
      ).rows[0].n >= jobs,
  );
  const ms = performance.now() - start;
  await boss.stop({ graceful: false, wait: false });
  return { jobs, ms };
}

const targets = {
  'intake: bare': bareIntake,
  'intake: postern + fastify': async () => ({ port: await mount('fastify', (await postern()).ph) }),
  'intake: postern + express': async () => ({ port: await mount('express', (await postern()).ph) }),
  'intake: postern + node:http': async () => ({ port: await mount('node:http', (await postern()).ph) }),
  'refresh: bare': bareRefresh,
  'refresh: postern + fastify': () => posternRefresh('fastify'),
  'refresh: postern + express': () => posternRefresh('express'),
  [`drain: postern outbox (concurrency ${DRAIN_CONCURRENCY})`]: async () => ({
    port: 0,
    fixtures: await drainPostern(DRAIN_CONCURRENCY),
  }),
  'drain: postern outbox (concurrency 500)': async () => ({ port: 0, fixtures: await drainPostern(500) }),
  [`drain: pg-boss (1 loop x batchSize ${DRAIN_CONCURRENCY})`]: async () => ({
    port: 0,
    fixtures: await drainPgBoss(1, DRAIN_CONCURRENCY),
  }),
  'drain: pg-boss (4 loops x batchSize 500)': async () => ({ port: 0, fixtures: await drainPgBoss(4, 500) }),
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
