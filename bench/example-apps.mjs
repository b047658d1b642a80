#!/usr/bin/env node
// The Fastify example app as a host runs it, next to bare Fastify baselines, in one run:
//   me      GET /auth/me through the example (in memory)  <-> bare Fastify + jose verify
//   intake  POST /inbox/webhook through the example on Postgres, WORKERS=0
//           <-> bare Fastify route: the same HMAC check + one INSERT ... ON CONFLICT DO NOTHING RETURNING
//
//   node bench/example-apps.mjs [--only me,intake] [--rounds 3] [--cycles 5] [--slice 2]
//                               [--warmup 3] [--connections 32] [--example "--import tsx src/server.ts"]
//                               [--no-pin] [--no-write]
//
// Every server runs in its own process: the example started as its package.json's `start`
// script does once the packages are built (`node --import tsx src/server.ts` in
// examples/fastify-app, with examples/tsconfig.run.json so `@postern/*` are the built packages;
// `--example` takes other node arguments, e.g. a precompiled entry), the baselines as bench/auth-server.mjs and
// bench/postgres-server.mjs targets, and bench/'s own Postern server (the library mounted on a
// bare Fastify app) beside them, so the gap between the example and the library is visible. A
// round starts fresh processes; the load moves between them in short slices, cycle after
// cycle, and each slice is compared with the baseline slice of the same cycle (this machine's
// speed drifts within minutes). Loopback only; the run
// lasts about rounds x kinds x 3 x (warmup + cycles x slice) seconds plus start-ups.
// Postgres: DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test; a database of its own is
// created for the run and dropped after it. Results go to docs/performance.md under
// "Example apps" unless --no-write.
import { spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import {
  cpuMicros,
  machine,
  median,
  medianRun,
  pinServers,
  root,
  startServer,
  stopServer,
  writeSection,
} from './lib.mjs';
import { SECRET } from './postgres-server.mjs';
import { intakeRequests, signedHeaders } from './signed-webhooks.mjs';

const { values: args } = parseArgs({
  options: {
    only: { type: 'string', default: 'me,intake' },
    rounds: { type: 'string', default: '3' },
    cycles: { type: 'string', default: '5' },
    slice: { type: 'string', default: '2' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    example: { type: 'string', default: '--import tsx src/server.ts' },
    /** Signing key of both sides: ES256 (P-256, the core's default key type) or EdDSA (Ed25519). */
    alg: { type: 'string', default: 'ES256' },
    'no-pin': { type: 'boolean', default: false },
    'no-write': { type: 'boolean', default: false },
  },
});
const rounds = Number(args.rounds);
const cycles = Number(args.cycles);
const slice = Number(args.slice);
const warmup = Number(args.warmup);
const connections = Number(args.connections);
const kinds = args.only.split(',').map((k) => k.trim());

const EXAMPLE_DIR = new URL('examples/fastify-app/', root);
const KEY_TYPES = {
  ES256: () => generateKeyPairSync('ec', { namedCurve: 'P-256' }),
  EdDSA: () => generateKeyPairSync('ed25519'),
};
if (!(args.alg in KEY_TYPES)) throw new Error(`--alg: one of ${Object.keys(KEY_TYPES).join(', ')}`);
const jwk = {
  ...KEY_TYPES[args.alg]().privateKey.export({ format: 'jwk' }),
  kid: randomUUID(),
  alg: args.alg,
};
const USER = { email: 'bench@example.test', password: 'Tangerine-Orbit-Velvet-4821' };
/** Stops of every process started and not yet stopped, so a failure leaves none behind. */
const live = new Set();
function track(server) {
  const stop = () => {
    live.delete(stop);
    return server.stop();
  };
  live.add(stop);
  return { ...server, stop };
}

/** Starts the example with `env` on a free loopback port and waits for its `listening` log line. */
function startExample(env, cpu) {
  const argv = [process.execPath, ...args.example.split(' ').filter(Boolean)];
  const [command, ...rest] = cpu === null ? argv : ['taskset', '-c', cpu, ...argv];
  const child = spawn(command, rest, {
    cwd: fileURLToPath(EXAMPLE_DIR),
    env: {
      ...process.env,
      TSX_TSCONFIG_PATH: '../tsconfig.run.json',
      NODE_ENV: 'production',
      PORT: '0',
      HOST: '127.0.0.1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (d) => {
      out += d;
      for (const line of out.split('\n')) {
        if (!line.startsWith('{')) continue;
        const entry = JSON.parse(line);
        if (entry.event !== 'listening') continue;
        child.stdout.off('data', onData);
        // Keep draining stdout (log lines) so a full pipe never blocks the server.
        child.stdout.resume();
        resolve(track({ url: entry.url, pid: child.pid, stop: () => stopServer(child) }));
        return;
      }
    };
    child.stdout.on('data', onData);
    child.on('exit', (code) => reject(new Error(`example exited with ${code}`)));
  });
}

async function post(url, path, body) {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

async function run(url, seconds, requests) {
  const result = await autocannon({ url, connections, duration: seconds, requests });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  }
  return { rps: result.requests.average, p99: result.latency.p99, total: result.requests.total };
}

const meRequests = (token) => [
  { method: 'GET', path: '/auth/me', headers: { authorization: `Bearer ${token}` } },
];
const intakeLoad = (seconds) => intakeRequests(signedHeaders(SECRET, Math.ceil(seconds * 20_000) + 5_000));

const pg = createRequire(new URL('packages/postgres/package.json', root))('pg');
let db = null;
async function database() {
  if (db) return db;
  const baseUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
  const name = `ph_example_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Pool({ connectionString: baseUrl, max: 1 });
  await admin.query(`CREATE DATABASE ${name}`);
  const u = new URL(baseUrl);
  u.pathname = `/${name}`;
  db = { url: u.toString(), admin, name, schemas: 0 };
  return db;
}

/** A server of bench/: `target` of `script`, tracked, with the load `requests(fixtures, s)`. */
async function benchServer(script, target, env, cpu, requests) {
  const server = track(await startServer(new URL(script, import.meta.url), target, env, cpu));
  return {
    pid: server.pid,
    stop: server.stop,
    load: (s) => run(`http://127.0.0.1:${server.port}`, s, requests(server.fixtures, s)),
  };
}

/** Each kind: how to start its servers and what load each gets. `library` is bench/'s own
 *  Postern server (the library in a bare Fastify app, as bench/auth.mjs and bench/postgres.mjs
 *  measure it): the gap between it and the example is what the example adds. */
const KINDS = {
  me: {
    title: '`GET /auth/me` (in memory)',
    baseline: 'bare Fastify + jose verify',
    target: 0.85,
    async start(cpu) {
      const env = { BENCH_JWK: JSON.stringify(jwk), BENCH_TOKENS: '1' };
      const fromFixtures = (f) => meRequests(f.accessToken);
      const baseline = await benchServer('auth-server.mjs', 'bare', env, cpu, fromFixtures);
      const library = await benchServer('auth-server.mjs', 'postern + fastify', env, cpu, fromFixtures);
      const example = await startExample(
        { JWT_PRIVATE_KEYS: JSON.stringify(jwk), ORIGIN: 'http://localhost:3000' },
        cpu,
      );
      await post(example.url, '/auth/signup', { name: 'Bench User', ...USER });
      const { accessToken } = await post(example.url, '/auth/login', USER);
      return {
        baseline,
        library,
        example: { ...example, load: (s) => run(example.url, s, meRequests(accessToken)) },
      };
    },
  },
  intake: {
    title: '`POST /inbox/webhook` (Postgres, `WORKERS=0`)',
    baseline: 'bare Fastify + HMAC check + one INSERT ... ON CONFLICT DO NOTHING RETURNING',
    target: 0.8,
    async start(cpu) {
      const d = await database();
      const env = () => ({ BENCH_DATABASE_URL: d.url, BENCH_SCHEMA: `ex_${++d.schemas}` });
      const load = (_f, s) => intakeLoad(s);
      const baseline = await benchServer('postgres-server.mjs', 'intake: bare', env(), cpu, load);
      const library = await benchServer('postgres-server.mjs', 'intake: postern + fastify', env(), cpu, load);
      const example = await startExample(
        { DATABASE_URL: d.url, DATABASE_SCHEMA: `ex_${++d.schemas}`, WORKERS: '0', WEBHOOK_SECRET: SECRET },
        cpu,
      );
      return {
        baseline,
        library,
        example: { ...example, load: (s) => run(example.url, s, intakeLoad(s)) },
      };
    },
  },
};

/** Stops every server still running and drops the run's database; on Ctrl-C too. */
async function cleanUp() {
  await Promise.all([...live].map((stop) => stop()));
  if (db) {
    const { admin, name } = db;
    db = null;
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => cleanUp().finally(() => process.exit(130)));
}

const pinned = args['no-pin'] ? null : pinServers();
console.log(pinned?.description ?? 'unpinned: servers and load generator share the cores');
const SIDES = ['baseline', 'library', 'example'];
const samples = Object.fromEntries(kinds.map((k) => [k, { baseline: [], library: [], example: [] }]));
try {
  for (let round = 1; round <= rounds; round++) {
    for (const kind of kinds) {
      const servers = await KINDS[kind].start(pinned?.cpu ?? null);
      try {
        for (const side of SIDES) if (warmup > 0) await servers[side].load(warmup);
        for (let cycle = 0; cycle < cycles; cycle++) {
          // Rotating the order spreads any bias of going first or last over all three.
          const order = SIDES.map((_, i) => SIDES[(i + cycle) % SIDES.length]);
          const line = [];
          for (const side of order) {
            const cpu0 = cpuMicros(servers[side].pid);
            const r = await servers[side].load(slice);
            const cpu1 = cpuMicros(servers[side].pid);
            r.cpuPerRequest = cpu0 === null || cpu1 === null ? null : (cpu1 - cpu0) / r.total;
            samples[kind][side].push(r);
            line.push(`${side} ${Math.round(r.rps)}`);
          }
          console.log(`round ${round} ${kind} cycle ${cycle + 1}: ${line.join(', ')} req/s`);
        }
      } finally {
        await Promise.all(SIDES.map((side) => servers[side].stop()));
      }
    }
  }
} finally {
  await cleanUp();
}

/** Ratio per cycle (side / baseline of the same cycle). */
const perCycle = (kind, side) => samples[kind][side].map((r, i) => r.rps / samples[kind].baseline[i].rps);
const cpuOf = (runs) => {
  const c = runs.map((r) => r.cpuPerRequest).filter((x) => x !== null);
  return c.length > 0 ? median(c) : null;
};
const NAMES = { library: 'Postern in bare Fastify (bench/)', example: 'Fastify example' };
const lines = [];
const verdicts = [];
for (const kind of kinds) {
  const spec = KINDS[kind];
  const byRound = (ratios) =>
    Array.from(
      { length: rounds },
      (_, i) => `${median(ratios.slice(i * cycles, (i + 1) * cycles)).toFixed(2)}x`,
    );
  const row = (name, runs, ratios) => {
    const mid = medianRun(runs);
    const cpu = cpuOf(runs);
    const ratio = ratios ? `${median(ratios).toFixed(2)}x` : '1.00x';
    const rounds = ratios ? byRound(ratios).join(', ') : '';
    return `| ${name} | ${Math.round(mid.rps).toLocaleString('en-US')} | ${mid.p99} ms | ${cpu === null ? 'n/a' : `${Math.round(cpu)} µs`} | ${ratio} | ${rounds} |`;
  };
  lines.push(
    `### ${spec.title}`,
    '',
    '| server | req/s (median slice) | p99 latency | CPU per request | ratio | ratio per round |',
    '|---|---:|---:|---:|---:|---:|',
    row(`${spec.baseline} (baseline)`, samples[kind].baseline, null),
    ...['library', 'example'].map((side) => row(NAMES[side], samples[kind][side], perCycle(kind, side))),
    '',
  );
  const ratio = median(perCycle(kind, 'example'));
  verdicts.push(
    `- ${kind}: Fastify example ${ratio.toFixed(2)}x ${spec.baseline} (target ${spec.target}x) ${ratio >= spec.target ? 'met' : 'MISSED'}`,
  );
}
const report = `${lines.join('\n')}\n${verdicts.join('\n')}`;
console.log(`\n${report}\n`);

if (!args['no-write']) {
  const placement = pinned
    ? `Servers on a core of their own (${pinned.description}).`
    : 'Servers and load generator unpinned.';
  writeSection(
    'Example apps',
    `## Example apps

\`bench/example-apps.mjs\` (autocannon) measures the Fastify example as a host starts it
(\`node ${args.example}\` in \`examples/fastify-app\`, \`NODE_ENV=production\`, default
\`LOG_LEVEL\`) next to a bare Fastify route doing only the core work, every server in its own
process: \`/auth/me\` (in-memory stores, an ${args.alg} key in \`JWT_PRIVATE_KEYS\`) against jose's
verify of the same kind of token; webhook intake on Postgres (\`DATABASE_URL\`, \`WORKERS=0\`)
against the same HMAC check and one \`INSERT ... ON CONFLICT DO NOTHING RETURNING\` on a pool of
the same size. Beside them, \`bench/\`'s own Postern server (the library registered on a bare
\`Fastify()\`, as \`bench/auth.mjs\` and \`bench/postgres.mjs\` run it): the gap between that row
and the example is what the example adds. ${placement} ${rounds} rounds, each with fresh
processes; the load (${connections} connections) moves between the three in ${slice} s slices, ${cycles} cycles
per round after ${warmup} s of warm-up each; a ratio is the median over all cycles of (server /
baseline of the same cycle), the last column the same per round. CPU per request is the
process's CPU time (\`/proc\`) over the requests it answered, median over slices.

${report}

Measured ${new Date().toISOString().slice(0, 10)} on ${machine()}, Postgres on the same machine;
the cores are shared with whatever else runs there, so compare ratios within one run, not
absolute numbers across runs. What the example adds per request, feature by feature: the next
section (written by hand, not by this script).
`,
  );
  console.log('written to docs/performance.md');
}
