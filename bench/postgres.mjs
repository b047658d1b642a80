#!/usr/bin/env node
// Postern on Postgres next to baselines measured in the same run, on the same database:
//   intake  <-> bare Fastify route: Standard Webhooks HMAC + one INSERT (deduplicated)
//   refresh <-> bare Fastify route: SHA-256 + one UPDATE ... RETURNING + jose sign
//   drain   <-> pg-boss draining the same number of no-op jobs
//
//   node bench/postgres.mjs [--duration 10] [--warmup 3] [--connections 50] [--rounds 3]
//                           [--jobs 20000] [--only intake,refresh,drain] [--no-write]
//
// Needs a Postgres server: DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test. A fresh
// database is created for the run and dropped after it; every process under test gets a schema
// of its own. Each target runs in its own process (bench/postgres-server.mjs); targets are
// measured in interleaved rounds and the median round is reported. Results go to
// docs/performance.md under "Postgres" unless --no-write.
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { machine, medianRun, startServer, writeSection } from './lib.mjs';
import { DRAIN_CONCURRENCY, SECRET, TARGETS } from './postgres-server.mjs';
import { intakeRequests, signedHeaders } from './signed-webhooks.mjs';

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '3' },
    jobs: { type: 'string', default: '20000' },
    only: { type: 'string', default: 'intake,refresh,drain' },
    'no-write': { type: 'boolean', default: false },
  },
});
const duration = Number(args.duration);
const warmup = Number(args.warmup);
const connections = Number(args.connections);
const rounds = Number(args.rounds);
const jobs = Number(args.jobs);
const only = args.only.split(',');

const SERVER = new URL('postgres-server.mjs', import.meta.url);
const pg = createRequire(new URL('../packages/postgres/package.json', import.meta.url))('pg');
const baseUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const dbName = `ph_bench_${randomBytes(4).toString('hex')}`;
const admin = new pg.Pool({ connectionString: baseUrl, max: 1 });
await admin.query(`CREATE DATABASE ${dbName}`);
const u = new URL(baseUrl);
u.pathname = `/${dbName}`;
const dbUrl = u.toString();
const settings = (await admin.query('SHOW synchronous_commit')).rows[0].synchronous_commit;
let schemaNo = 0;
const envFor = (extra = {}) => ({ BENCH_DATABASE_URL: dbUrl, BENCH_SCHEMA: `bench_${++schemaNo}`, ...extra });

const jwk = {
  ...generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' }),
  kid: randomUUID(),
  alg: 'EdDSA',
};
async function run(port, seconds, requests) {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    duration: seconds,
    requests,
  });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`port ${port}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  }
  return { rps: result.requests.average, p99: result.latency.p99 };
}

const LOADS = {
  intake: (port, seconds) =>
    run(port, seconds, intakeRequests(signedHeaders(SECRET, Math.ceil(seconds * 20_000) + 5_000))),
  /** Each answer's new refresh token goes back into the pool: every request is a real rotation. */
  refresh: (port, seconds, tokens) => {
    const pool = [...tokens];
    return run(port, seconds, [
      {
        method: 'POST',
        path: '/auth/refresh',
        headers: { 'content-type': 'application/json' },
        setupRequest: (req) => ({ ...req, body: JSON.stringify({ refreshToken: pool.shift() ?? 'none' }) }),
        onResponse: (status, body) => {
          if (status === 200) pool.push(JSON.parse(body).refreshToken);
        },
      },
    ]);
  },
};

const samples = new Map();
const record = (target, r) => samples.set(target, [...(samples.get(target) ?? []), r]);
try {
  for (let round = 1; round <= rounds; round++) {
    for (const target of TARGETS) {
      const kind = target.split(':')[0];
      if (!only.includes(kind)) continue;
      if (kind === 'drain') {
        const server = await startServer(SERVER, target, envFor({ BENCH_JOBS: String(jobs) }));
        await server.stop();
        const r = { rps: (server.fixtures.jobs / server.fixtures.ms) * 1000, ms: server.fixtures.ms };
        record(target, r);
        console.log(
          `round ${round} ${target}: ${Math.round(r.rps)} jobs/s (${jobs} in ${Math.round(r.ms)} ms)`,
        );
        continue;
      }
      const tokens = connections * 4;
      const server = await startServer(
        SERVER,
        target,
        envFor({ BENCH_JWK: JSON.stringify(jwk), BENCH_TOKENS: String(tokens) }),
      );
      try {
        const half = (i) =>
          server.fixtures.refreshTokens?.slice(i * 2 * connections, (i + 1) * 2 * connections);
        if (warmup > 0) await LOADS[kind](server.port, warmup, half(0));
        const r = await LOADS[kind](server.port, duration, half(1));
        record(target, r);
        console.log(`round ${round} ${target}: ${Math.round(r.rps)} req/s, p99 ${r.p99} ms`);
      } finally {
        await server.stop();
      }
    }
  }
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.end();
}

const lines = [];
const verdicts = [];
const conc = DRAIN_CONCURRENCY;
/** Each Postern row is compared with the baseline named here (drain: its pg-boss pair). */
const BASELINE_OF = {
  'intake: postern + fastify': 'intake: bare',
  'intake: postern + express': 'intake: bare',
  'intake: postern + node:http': 'intake: bare',
  'refresh: postern + fastify': 'refresh: bare',
  'refresh: postern + express': 'refresh: bare',
  [`drain: postern outbox (concurrency ${conc})`]: `drain: pg-boss (1 loop x batchSize ${conc})`,
  'drain: postern outbox (concurrency 500)': 'drain: pg-boss (4 loops x batchSize 500)',
};
const TITLES = {
  intake: ['Webhook intake (`POST /inbox/webhook`)', 'req/s', 0.8],
  refresh: ['Refresh (`POST /auth/refresh`)', 'req/s', undefined],
  drain: ['Outbox drain (no-op consumer)', 'jobs/s', 1],
};
for (const kind of Object.keys(TITLES)) {
  if (!only.includes(kind)) continue;
  const [title, unit, target] = TITLES[kind];
  lines.push(
    `### ${title}`,
    '',
    `| target | ${unit} | ${kind === 'drain' ? 'time' : 'p99 latency'} | compared with | ratio |`,
    '|---|---:|---:|---|---:|',
  );
  for (const name of TARGETS.filter((t) => t.startsWith(`${kind}:`))) {
    const r = medianRun(samples.get(name));
    const label = (t) => t.slice(kind.length + 2);
    const extra = kind === 'drain' ? `${(r.ms / 1000).toFixed(2)} s` : `${r.p99} ms`;
    const against = BASELINE_OF[name];
    const ratio = against ? r.rps / medianRun(samples.get(against)).rps : null;
    lines.push(
      `| ${label(name)} | ${Math.round(r.rps).toLocaleString('en-US')} | ${extra} | ${against ? label(against) : 'baseline'} | ${ratio === null ? '' : `${ratio.toFixed(2)}x`} |`,
    );
    if (ratio !== null && target !== undefined) {
      verdicts.push(
        `${name}: ${ratio.toFixed(2)}x ${label(against)} (target ${target}x) ${ratio >= target ? 'met' : 'MISSED'}`,
      );
    }
  }
  lines.push('');
}
const tables = lines.join('\n');
console.log(`\n${tables}\n${verdicts.join('\n')}\n`);

if (!args['no-write']) {
  writeSection(
    'Postgres',
    `## Postgres

\`bench/postgres.mjs\` (autocannon) measures Postern on \`@postern/postgres\` next to
baselines doing only the same database work, in the same run, on the same (fresh) database:
intake next to a bare Fastify route doing the Standard Webhooks HMAC check and one INSERT
(deduplicated on the webhook id); refresh next to a bare Fastify route doing SHA-256 of the
token, one \`UPDATE ... RETURNING\` that swaps it for its successor, and a jose sign; the outbox
draining ${jobs.toLocaleString('en-US')} no-op events in one process next to pg-boss 10.4.2 (the newest release that
runs on Node 20) draining as many no-op jobs in one process, in pairs: the outbox with
${DRAIN_CONCURRENCY} deliveries at once against pg-boss with the same ${DRAIN_CONCURRENCY} jobs in hand (one \`work()\` loop,
\`batchSize: ${DRAIN_CONCURRENCY}\`), and the outbox with 500 at once against pg-boss tuned for throughput (4 loops
of 500, up to 2,000 in hand). pg-boss 10 waits its polling interval (0.5 s at least) between two
fetches of a loop, so batches and loops are its throughput. Every process has a pool of 10
connections. ${connections} HTTP connections, ${warmup} s warm-up, ${duration} s measured, ${rounds} interleaved
rounds, median round shown; the server runs with \`synchronous_commit = ${settings}\`.
Targets: intake at least 0.8x its baseline, drain at least 1x pg-boss. The Postgres part of
intake is the same one INSERT in both; what separates Postern from the bare route is the
CPU of the webhook pipeline and the framework adapter, the same gap as on in-memory stores (see
"Webhook intake" above), which the \`node:http\` row (the neutral handler without a framework)
isolates.

${tables}
${verdicts.map((v) => `- ${v}`).join('\n')}

Measured ${new Date().toISOString().slice(0, 10)} on ${machine()}, Postgres on the same machine.
Absolute numbers depend on the machine and the disk (every commit waits for a flush); the
ratios are the point. Reproduce with \`node bench/postgres.mjs\` (options \`--duration\`,
\`--connections\`, \`--rounds\`, \`--jobs\`, \`--only intake,refresh,drain\`).
`,
  );
  console.log('written to docs/performance.md');
}
