#!/usr/bin/env node
// Signed webhook intake throughput: Postern through each adapter next to a bare Fastify route
// that does only the same HMAC check and an in-memory append, in one run.
//
//   node bench/webhook-intake.mjs [--rounds 3] [--cycles 6] [--slice 2] [--connections 50]
//                                 [--only ...] [--no-pin] [--no-write]
//
// Each server runs in its own process (bench/webhook-server.mjs), on a core of its own where
// the machine allows (see pinServers). A round starts a fresh process per target, all of them
// up at once; the load then moves between them in short slices, cycle after cycle, and each
// Postern slice is compared with the baseline slice of the same cycle. Why: this host's
// speed drifts by half within minutes (slices seconds apart see the same machine, rounds
// minutes apart did not), and one process of a server can run several percent faster or slower
// than the next (memory layout, hash seeds), which fresh processes per round average out.
// Every request carries a distinct `webhook-id`, so each one is a real insert (no dedupe
// short-cut). Results go to docs/performance.md under "Webhook intake" unless --no-write.
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { cpuMicros, machine, median, medianRun, pinServers, startServer, writeSection } from './lib.mjs';
import { intakeRequests, signedHeaders, WEBHOOK_BODY } from './signed-webhooks.mjs';
import { SECRET, TARGETS } from './webhook-server.mjs';

const { values: args } = parseArgs({
  options: {
    /** Seconds of load per server per cycle. */
    slice: { type: 'string', default: '2' },
    cycles: { type: 'string', default: '6' },
    /** Fresh server processes per round. */
    rounds: { type: 'string', default: '3' },
    /** Seconds of load per server before the first cycle (JIT, heap growth). */
    warmup: { type: 'string', default: '4' },
    connections: { type: 'string', default: '50' },
    'no-write': { type: 'boolean', default: false },
    /** Share the cores between servers and load generator as the scheduler likes. */
    'no-pin': { type: 'boolean', default: false },
    /** Comma-separated targets to run; the baselines they are compared with run too. */
    only: { type: 'string' },
  },
});
const slice = Number(args.slice);
const cycles = Number(args.cycles);
const rounds = Number(args.rounds);
const warmup = Number(args.warmup);
const connections = Number(args.connections);

const SERVER = new URL('webhook-server.mjs', import.meta.url);
const BASELINE = TARGETS[0];
async function load(port, seconds) {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    duration: seconds,
    requests: intakeRequests(signedHeaders(SECRET, Math.ceil(seconds * 40_000) + 10_000)),
  });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`port ${port}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  }
  return { rps: result.requests.average, p99: result.latency.p99, total: result.requests.total };
}

const EXPRESS_BASELINE = 'express (bare HMAC route)';
/** Not a target: the intake's required work inline on bare Fastify (see webhook-server.mjs). */
const REFERENCE = 'fastify (required work inline)';
/** Each Postern row next to the bare route of its own framework, too (node:http has none). */
const OWN_BASELINE = { 'postern + fastify': BASELINE, 'postern + express': EXPRESS_BASELINE };
const only = args.only?.split(',').map((t) => t.trim());
// A subset still runs the baselines its targets are compared with.
const RUN = TARGETS.filter(
  (t) =>
    !only || t === BASELINE || t === REFERENCE || only.includes(t) || only.some((o) => OWN_BASELINE[o] === t),
);
const pinned = args['no-pin'] ? null : pinServers();
console.log(pinned?.description ?? 'unpinned: servers and load generator share the cores');
const samples = Object.fromEntries(RUN.map((t) => [t, []]));
for (let round = 1; round <= rounds; round++) {
  const servers = {};
  try {
    for (const target of RUN) servers[target] = await startServer(SERVER, target, {}, pinned?.cpu ?? null);
    for (const target of RUN) if (warmup > 0) await load(servers[target].port, warmup);
    for (let cycle = 0; cycle < cycles; cycle++) {
      // Rotating the order spreads any bias of going first or last over all targets.
      const order = RUN.map((_, i) => RUN[(i + cycle) % RUN.length]);
      const line = [];
      for (const target of order) {
        const { port, fixtures } = servers[target];
        const cpu0 = cpuMicros(fixtures.pid);
        const r = await load(port, slice);
        const cpu1 = cpuMicros(fixtures.pid);
        r.cpuPerRequest = cpu0 === null || cpu1 === null ? null : (cpu1 - cpu0) / r.total;
        samples[target].push(r);
        line.push(`${target} ${Math.round(r.rps)}`);
      }
      console.log(`round ${round} cycle ${cycle + 1}: ${line.join(', ')} req/s`);
    }
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.stop()));
  }
}

const isPostern = (target) => target.startsWith('postern');
// Ratios per cycle (each target against the baseline of the same cycle), then the median over
// cycles.
const ratioTo = (target, baseline) => median(samples[target].map((r, i) => r.rps / samples[baseline][i].rps));
const rows = RUN.map((target) => {
  const mid = medianRun(samples[target]);
  const cpus = samples[target].map((r) => r.cpuPerRequest).filter((c) => c !== null);
  return {
    target,
    rps: mid.rps,
    p99: mid.p99,
    cpu: cpus.length > 0 ? median(cpus) : null,
    ratio: ratioTo(target, BASELINE),
    own: OWN_BASELINE[target] ? ratioTo(target, OWN_BASELINE[target]) : null,
  };
});
const base = rows.find((r) => r.target === BASELINE);
const cpuCell = (r) =>
  r.cpu === null ? 'n/a' : `${Math.round(r.cpu)} µs (${(base.cpu / r.cpu).toFixed(2)}x)`;
const table = [
  '| server | req/s (median slice) | p99 latency | ratio to bare Fastify | ratio to bare route of its framework | CPU per request (ratio) |',
  '|---|---:|---:|---:|---:|---:|',
  ...rows.map(
    (r) =>
      `| ${r.target} | ${Math.round(r.rps).toLocaleString('en-US')} | ${r.p99} ms | ${r.ratio.toFixed(2)}x | ${r.own === null ? '' : `${r.own.toFixed(2)}x`} | ${cpuCell(r)} |`,
  ),
].join('\n');
const TARGET = 0.8;
const verdict = rows
  .filter((r) => isPostern(r.target))
  .map((r) => `${r.target} ${r.ratio.toFixed(2)}x (${r.ratio >= TARGET ? 'met' : 'not met'})`)
  .join(', ');
const floor = rows.find((r) => r.target === REFERENCE);
const floorNote = floor
  ? `; the required work inline on bare Fastify (reference, no Postern code): ${floor.ratio.toFixed(2)}x`
  : '';
console.log(`\n${table}\n\nTarget ${TARGET}x: ${verdict}${floorNote}\n`);

if (!args['no-write']) {
  const placement = pinned
    ? `Each server runs in its own process on a core of its own (${pinned.description}), so the\ntwo never compete for a core.`
    : 'Each server runs in its own process (unpinned).';
  const section = `## Webhook intake

Signed webhook intake (\`bench/webhook-intake.mjs\`, autocannon): \`POST /inbox/webhook\` with a
~${WEBHOOK_BODY.length}-byte Resend \`email.delivered\` payload and Standard Webhooks headers, a distinct
\`webhook-id\` per request (every request is verified, parsed, routed and inserted into the
in-memory outbox). Baseline: a bare Fastify route doing only the same HMAC-SHA-256 check and an
in-memory append. The same work on bare Express (\`express.raw()\`) shows what any Express route
costs here; the "its framework" column compares each adapter with that bare route of its own
framework. ${placement} ${rounds} rounds, each with a fresh process per server, all
up at once; the load (${connections} connections) moves between them in ${slice} s slices for ${cycles}
cycles per round, after ${warmup} s of warm-up each. req/s and p99 are those of each server's
median slice; a ratio is the median over all cycles of (target / baseline of the same cycle). Target: Postern at 0.8x the
bare Fastify baseline or better.

${table}

Against the ${TARGET}x target (req/s): ${verdict}${floorNote}.

The \`required work inline\` row is a reference, not a target: the same bare Fastify route doing
what [webhooks.md](webhooks.md) requires of every signed request, written inline with no Postern code, ports
or promises (secret setting read per request, both header sets with their id, timestamp and
signature-list rules, strict UTF-8 and a JSON-object body, the four routing rules, a dedupe
\`Map\`, an outbox-shaped record with a random id, the same answer headers). Its ratio is what
any implementation of these rules can reach through Fastify on this machine.

What the Postern rows do beyond the baseline: the neutral request (route match, body read
under the limit, problem+json mapping), the secret read per request, the full signature rules
(both header sets, id and timestamp checks, several secrets), \`JSON.parse\` of the body (it
must be a JSON object, and the unified route reads \`type\`/\`data\` to route it), the
dedupe-key lookup and the insert with a random id. The \`node:http\` row mounts the core with
no framework, so the gap between it and an adapter row is the adapter's own cost. CPU per
request is the server process's CPU time (\`/proc\`) divided by the requests it answered: on
a shared machine it moves less than req/s, which also counts time spent waiting for a core.

Where the gap is: see the next section (written by hand from profiles, not by this script).

Measured ${new Date().toISOString().slice(0, 10)} on ${machine()},
in-memory stores. Absolute numbers depend on the machine; the ratio is the point. Reproduce with
\`node bench/webhook-intake.mjs\` (options: \`--rounds\`, \`--cycles\`, \`--slice\`, \`--connections\`, \`--only\`, \`--no-pin\`).
`;
  writeSection('Webhook intake', section);
  console.log('written to docs/performance.md');
}
