#!/usr/bin/env node
// Signed webhook intake throughput: Gatehouse through each adapter next to a bare Fastify route
// that does only the same HMAC check and an in-memory append, in one run.
//
//   node bench/webhook-intake.mjs [--duration 10] [--connections 50] [--rounds 3] [--no-write]
//
// Each server runs in its own process (bench/webhook-server.mjs); targets are measured in
// interleaved rounds and the median round is reported. Every request carries a distinct
// `webhook-id`, so each one is a real insert (no dedupe short-cut). Results go to
// docs/performance.md under "Webhook intake" unless --no-write.
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { machine, median, medianRun, startServer, writeSection } from './lib.mjs';
import { SECRET, TARGETS } from './webhook-server.mjs';

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '3' },
    'no-write': { type: 'boolean', default: false },
    /** Comma-separated targets to run; the baselines they are compared with run too. */
    only: { type: 'string' },
  },
});
const duration = Number(args.duration);
const warmup = Number(args.warmup);
const connections = Number(args.connections);
const rounds = Number(args.rounds);

const SERVER = new URL('webhook-server.mjs', import.meta.url);
const BASELINE = TARGETS[0];
const KEY = Buffer.from(SECRET.slice(6), 'base64');
/** A Resend `email.delivered` payload (fixtures/resend), about 600 bytes. */
const BODY = JSON.stringify({
  type: 'email.delivered',
  created_at: '2026-02-22T23:41:12.126Z',
  data: {
    broadcast_id: '8b146471-e88e-4322-86af-016cd36fd216',
    created_at: '2026-02-22T23:41:11.894719+00:00',
    email_id: '56761188-7520-42d8-8898-ff6fc54ce618',
    message_id: '<111-222-333@email.example.com>',
    from: 'Acme <onboarding@resend.dev>',
    to: ['delivered@resend.dev'],
    subject: 'Sending this example',
    template_id: '43f68331-0622-4e15-8202-246a0388854b',
    tags: { category: 'confirm_email' },
  },
});

/** Signed header sets with distinct ids, made before the run so signing costs the client nothing. */
function signedHeaders(count) {
  const ts = String(Math.floor(Date.now() / 1000));
  const out = new Array(count);
  for (let i = 0; i < count; i++) {
    const id = `msg_${randomUUID()}`;
    const sig = createHmac('sha256', KEY).update(`${id}.${ts}.${BODY}`).digest('base64');
    out[i] = {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': ts,
      'webhook-signature': `v1,${sig}`,
    };
  }
  return out;
}

/** CPU time (user + system, in µs) the server process has used so far; null off Linux. On a
 *  busy machine CPU per request is steadier than req/s, which also counts time spent waiting
 *  for a core. */
function cpuMicros(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    // utime and stime are fields 14 and 15 of stat(5), in clock ticks (USER_HZ, 100 on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return null;
  }
}

async function load(port, seconds) {
  const headers = signedHeaders(Math.ceil(seconds * 40_000) + 10_000);
  let next = 0;
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        path: '/inbox/webhook',
        body: BODY,
        setupRequest: (req) => ({ ...req, headers: headers[next++ % headers.length] }),
      },
    ],
  });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`port ${port}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  }
  return { rps: result.requests.average, p99: result.latency.p99, total: result.requests.total };
}

const EXPRESS_BASELINE = 'express (bare HMAC route)';
/** Each Gatehouse row next to the bare route of its own framework, too (node:http has none). */
const OWN_BASELINE = { 'gatehouse + fastify': BASELINE, 'gatehouse + express': EXPRESS_BASELINE };
const only = args.only?.split(',').map((t) => t.trim());
// A subset still runs the baselines its targets are compared with.
const RUN = TARGETS.filter(
  (t) => !only || t === BASELINE || only.includes(t) || only.some((o) => OWN_BASELINE[o] === t),
);
const samples = Object.fromEntries(RUN.map((t) => [t, []]));
for (let round = 1; round <= rounds; round++) {
  for (const target of RUN) {
    const server = await startServer(SERVER, target);
    try {
      if (warmup > 0) await load(server.port, warmup);
      const cpu0 = cpuMicros(server.fixtures.pid);
      const r = await load(server.port, duration);
      const cpu1 = cpuMicros(server.fixtures.pid);
      r.cpuPerRequest = cpu0 === null || cpu1 === null ? null : (cpu1 - cpu0) / r.total;
      samples[target].push(r);
      const cpuText = r.cpuPerRequest === null ? '' : `, ${Math.round(r.cpuPerRequest)} µs CPU/request`;
      console.log(`round ${round} ${target}: ${Math.round(r.rps)} req/s, p99 ${r.p99} ms${cpuText}`);
    } finally {
      await server.stop();
    }
  }
}

const isGatehouse = (target) => target.startsWith('gatehouse');
// Ratios per round (each target against the baseline of the same round), then the median over
// rounds: on a shared machine the load drifts between rounds.
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
  '| server | req/s (median round) | p99 latency | ratio to bare Fastify | ratio to bare route of its framework | CPU per request (ratio) |',
  '|---|---:|---:|---:|---:|---:|',
  ...rows.map(
    (r) =>
      `| ${r.target} | ${Math.round(r.rps).toLocaleString('en-US')} | ${r.p99} ms | ${r.ratio.toFixed(2)}x | ${r.own === null ? '' : `${r.own.toFixed(2)}x`} | ${cpuCell(r)} |`,
  ),
].join('\n');
const TARGET = 0.8;
const verdict = rows
  .filter((r) => isGatehouse(r.target))
  .map((r) => `${r.target} ${r.ratio.toFixed(2)}x (${r.ratio >= TARGET ? 'met' : 'not met'})`)
  .join(', ');
console.log(`\n${table}\n\nTarget ${TARGET}x: ${verdict}\n`);

if (!args['no-write']) {
  const section = `## Webhook intake

Signed webhook intake (\`bench/webhook-intake.mjs\`, autocannon): \`POST /inbox/webhook\` with a
~${BODY.length}-byte Resend \`email.delivered\` payload and Standard Webhooks headers, a distinct
\`webhook-id\` per request (every request is verified, parsed, routed and inserted into the
in-memory outbox). Baseline: a bare Fastify route doing only the same HMAC-SHA-256 check and an
in-memory append. The same work on bare Express (\`express.raw()\`) shows what any Express route
costs here; the "its framework" column compares each adapter with that bare route of its own
framework. Each server runs in its own process; ${connections} connections, ${warmup} s warm-up,
${duration} s measured, ${rounds} interleaved rounds; req/s and p99 of the median round, ratios are
the median over rounds of (target / baseline of the same round). Target: Gatehouse at 0.8x the
bare Fastify baseline or better.

${table}

Against the ${TARGET}x target (req/s): ${verdict}.

What the Gatehouse rows do beyond the baseline: the neutral request (route match, body read
under the limit, problem+json mapping), the secret read per request, the full signature rules
(both header sets, id and timestamp checks, several secrets), \`JSON.parse\` of the body (it
must be a JSON object, and the unified route reads \`type\`/\`data\` to route it), the
dedupe-key lookup and the insert with a random id. The \`node:http\` row mounts the core with
no framework, so the gap between it and an adapter row is the adapter's own cost. CPU per
request is the server process's CPU time (\`/proc\`) divided by the requests it answered: on
a shared machine it moves less than req/s, which also counts time spent waiting for a core.

Where the gap is (profiled 2026-11-22; in-process, without HTTP, CPU per call): the bare route's
work is about 13 µs (most of it the HMAC), Gatehouse's \`handle()\` for the same request about
34 µs. About half of the extra 21 µs is the in-memory outbox insert: its two Maps (by id and by
dedupe key) grow to some 100,000 entries in a run, and GC walks that live heap, where the
baseline appends to an array (with the insert stubbed out, \`handle()\` costs about 21 µs). The
rest is spread thin: \`JSON.parse\` and the UTF-8 check of the body (the payload must be a JSON
object, and the outbox keeps the exact signed bytes), the full header rules, the problem-aware
reply and a few awaits. An A/B of the Fastify adapter (its stream read against Fastify's own
buffer parser) showed no difference. Through HTTP the gap grows with the framework's own
work, which is why the \`node:http\` row leads. On Postgres (below) the database commit dominates
and the same pipeline reaches the target.

Measured ${new Date().toISOString().slice(0, 10)} on ${machine()},
in-memory stores. Absolute numbers depend on the machine; the ratio is the point. Reproduce with
\`node bench/webhook-intake.mjs\` (options: \`--duration\`, \`--connections\`, \`--rounds\`).
`;
  writeSection('Webhook intake', section);
  console.log('written to docs/performance.md');
}
