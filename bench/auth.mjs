#!/usr/bin/env node
// Auth throughput: GET /auth/me, POST /auth/login and POST /auth/refresh through each adapter,
// each next to a bare Fastify baseline doing only the same core work, in one run:
//   me      <-> jose verify of the same EdDSA access token (same iss/aud/typ/claims checks)
//   login   <-> Argon2id verify with the same parameters (OWASP: 19 MiB, t=2, p=1)
//   refresh <-> SHA-256 of the token + Map lookup/rotation + jose sign of a new access token
//
//   node bench/auth.mjs [--duration 10] [--warmup 3] [--connections 50] [--rounds 3] [--only me,login] [--no-write]
//
// Each server runs in its own process (bench/auth-server.mjs); targets are measured in
// interleaved rounds and the median round is reported. Limiter limits are raised for the run
// (every login succeeds; successes are not counted anyway). Refresh tokens circulate: each
// answer's new refresh token goes back into the pool, so every request is a real rotation.
// Results go to docs/performance.md under "Auth" unless --no-write.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { TARGETS, USER } from './auth-server.mjs';
import { machine, median, medianRun, startServer, writeSection } from './lib.mjs';

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '3' },
    only: { type: 'string', default: 'me,login,refresh' },
    'no-write': { type: 'boolean', default: false },
  },
});
const duration = Number(args.duration);
const warmup = Number(args.warmup);
const connections = Number(args.connections);
const rounds = Number(args.rounds);

const SERVER = new URL('auth-server.mjs', import.meta.url);
const jwk = {
  ...generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' }),
  kid: randomUUID(),
  alg: 'EdDSA',
};

/** One autocannon request spec per route; `fixtures` come from the server under test. */
const ROUTES = {
  me: {
    title: '`GET /auth/me`',
    baseline: 'bare Fastify + jose verify',
    target: 0.85,
    requests: (f) => [
      { method: 'GET', path: '/auth/me', headers: { authorization: `Bearer ${f.accessToken}` } },
    ],
  },
  login: {
    title: '`POST /auth/login`',
    baseline: 'bare Fastify + Argon2id verify',
    target: 0.9,
    requests: () => [
      {
        method: 'POST',
        path: '/auth/login',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: USER.email, password: USER.password }),
      },
    ],
  },
  refresh: {
    title: '`POST /auth/refresh`',
    baseline: 'bare Fastify + SHA-256, Map rotation, jose sign',
    target: undefined,
    requests: (f) => {
      // A pool, not a chain per connection (autocannon resets its per-connection context after
      // each pass over the list): a request takes a token, its answer puts the successor back.
      const pool = [...f.refreshTokens];
      return [
        {
          method: 'POST',
          path: '/auth/refresh',
          headers: { 'content-type': 'application/json' },
          setupRequest: (req) => ({ ...req, body: JSON.stringify({ refreshToken: pool.shift() ?? 'none' }) }),
          onResponse: (status, body) => {
            if (status === 200) pool.push(JSON.parse(body).refreshToken);
          },
        },
      ];
    },
  },
};

async function load(port, fixtures, route, seconds) {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    duration: seconds,
    requests: ROUTES[route].requests(fixtures),
  });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${route} on port ${port}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  }
  return { rps: result.requests.average, p99: result.latency.p99 };
}

const routes = args.only.split(',').filter((r) => r in ROUTES);
const env = { BENCH_JWK: JSON.stringify(jwk), BENCH_TOKENS: String(connections * 4) };
const samples = new Map();
for (let round = 1; round <= rounds; round++) {
  for (const route of routes) {
    for (const target of TARGETS) {
      const server = await startServer(SERVER, target, env);
      try {
        // Warm-up and measurement draw on separate halves of the prepared refresh tokens.
        if (warmup > 0) await load(server.port, fixtures(server, 0), route, warmup);
        const r = await load(server.port, fixtures(server, 1), route, duration);
        const key = `${route}|${target}`;
        samples.set(key, [...(samples.get(key) ?? []), r]);
        console.log(`round ${round} ${route} ${target}: ${Math.round(r.rps)} req/s, p99 ${r.p99} ms`);
      } finally {
        await server.stop();
      }
    }
  }
}

/** Half of the prepared refresh tokens for the warm-up, the other half for the measurement. */
function fixtures(server, half) {
  const t = server.fixtures.refreshTokens;
  return { ...server.fixtures, refreshTokens: t.slice(half * 2 * connections, (half + 1) * 2 * connections) };
}

// Ratios are taken per round (each target against the baseline measured minutes apart at
// most), then the median over rounds: on a shared machine the load drifts between rounds, and
// comparing medians taken from different rounds would measure that drift.
const lines = [];
const verdicts = [];
/** Each Postern row next to the bare route of its own framework, too. */
const OWN_BASELINE = { 'postern + fastify': 'bare', 'postern + express': 'bare express' };
for (const route of routes) {
  const spec = ROUTES[route];
  const base = samples.get(`${route}|bare`);
  lines.push(
    `### ${spec.title}`,
    '',
    '| server | req/s | p99 latency | ratio to baseline (bare Fastify) | ratio to bare route of its framework |',
    '|---|---:|---:|---:|---:|',
  );
  for (const target of TARGETS) {
    const runs = samples.get(`${route}|${target}`);
    const r = medianRun(runs);
    const ratioTo = (baseline) => median(runs.map((x, i) => x.rps / baseline[i].rps));
    const ratio = ratioTo(base);
    const own = OWN_BASELINE[target] ? ratioTo(samples.get(`${route}|${OWN_BASELINE[target]}`)) : null;
    const name = target === 'bare' ? `${spec.baseline} (baseline)` : target;
    lines.push(
      `| ${name} | ${Math.round(r.rps).toLocaleString('en-US')} | ${r.p99} ms | ${ratio.toFixed(2)}x | ${own === null ? '' : `${own.toFixed(2)}x`} |`,
    );
    if (OWN_BASELINE[target] && spec.target !== undefined) {
      verdicts.push(
        `${route} via ${target}: ${ratio.toFixed(2)}x (target ${spec.target}x) ${ratio >= spec.target ? 'met' : 'MISSED'}; ${own.toFixed(2)}x its framework's bare route`,
      );
    }
  }
  lines.push('');
}
const tables = lines.join('\n');
console.log(`\n${tables}\n${verdicts.join('\n')}\n`);

if (!args['no-write']) {
  writeSection(
    'Auth',
    `## Auth

\`bench/auth.mjs\` (autocannon) runs each route through both adapters next to a bare Fastify
route doing only the core work of that route, in the same run: for \`/auth/me\` the jose verify
of the same EdDSA access token (same \`iss\`/\`aud\`/\`typ\`/claims checks); for \`/auth/login\`
the Argon2id verify with the same parameters (19 MiB, t=2, p=1); for \`/auth/refresh\` SHA-256 of
the token, a Map lookup and rotation, and a jose sign. Postern runs on in-memory stores with
the limiter raised out of the way; each refresh answer's new token is used by a later request,
so every request is a real rotation. Each server runs in its own process; ${connections} connections, ${warmup} s warm-up,
${duration} s measured, ${rounds} interleaved rounds; req/s and p99 of the median round, ratio =
median over rounds of (target / baseline of the same round). Targets: \`/auth/me\` at
0.85x its baseline or better, login at 0.9x raw Argon2id verify or better.

${tables}
Reading the numbers: the Express rows carry Express's own per-request cost (its router and
\`req\`/\`res\` extensions), which a bare Fastify baseline does not pay. The \`bare express\` row is
the same baseline work mounted on bare Express (with \`express.json()\`): the ceiling any
Express route has on this machine, and the last column compares each adapter with the bare route
of its own framework. Through Fastify,
Postern's extra work on \`/auth/me\` (routing, ended-session check, user and MFA lookups, the
problem-aware response) stays within the target. Login is dominated by Argon2id; Postern adds a
session, a signed token and limiter bookkeeping, and its hash queue runs at most 4 hashes at once
(the default libuv pool size). On a busy or 2-core machine the rounds scatter widely (the run log
shows each round), so compare ratios of one run, never absolute numbers across runs.

Measured ${new Date().toISOString().slice(0, 10)} on ${machine()}. Absolute numbers depend on the
machine; the ratios are the point. Reproduce with \`pnpm bench\` (\`node bench/auth.mjs\`; options
\`--duration\`, \`--connections\`, \`--rounds\`, \`--only me,login,refresh\`).
`,
  );
  console.log(`written to ${fileURLToPath(new URL('../docs/performance.md', import.meta.url))}`);
}
