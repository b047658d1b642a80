#!/usr/bin/env node
// Where signed intake spends its CPU, per request: each server of bench/webhook-server.mjs under
// `perf record` (cpu-clock samples of the whole process: V8's builtins, runtime and garbage
// collector, Node's C++, the kernel), next to the bare Fastify baseline. `--cpu-prof` sees
// JavaScript only, and most of the gap to the baseline is not there.
//
//   node bench/intake-profile.mjs [--only 'postern + fastify'] [--requests 200000]
//                                 [--warmup 150000] [--frequency 5000] [--top 40]
//
// Needs `perf` (Debian: linux-perf) allowed to sample another process (root, or
// kernel.perf_event_paranoid <= 1). Prints, per symbol, µs per request for each target and the
// difference to the baseline, largest differences first. Sampling slows the servers down, so
// read the differences, not the totals; throughput is what bench/webhook-intake.mjs measures.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { pinServers, root, startServer } from './lib.mjs';
import { intakeRequests, signedHeaders } from './signed-webhooks.mjs';
import { SECRET, TARGETS } from './webhook-server.mjs';

const { values: args } = parseArgs({
  options: {
    only: { type: 'string', default: 'postern + fastify' },
    requests: { type: 'string', default: '200000' },
    warmup: { type: 'string', default: '150000' },
    frequency: { type: 'string', default: '5000' },
    top: { type: 'string', default: '40' },
  },
});
const requests = Number(args.requests);
const frequency = Number(args.frequency);
const BASELINE = TARGETS[0];
const RUN = [BASELINE, ...args.only.split(',').map((t) => t.trim())];
for (const t of RUN)
  if (!TARGETS.includes(t)) throw new Error(`unknown target ${t}; one of: ${TARGETS.join(', ')}`);
try {
  execFileSync('perf', ['--version'], { stdio: 'ignore' });
} catch {
  console.error('perf is not installed (Debian: apt-get install -y linux-perf)');
  process.exit(2);
}

const SERVER = new URL('webhook-server.mjs', import.meta.url);
const dir = mkdtempSync(join(tmpdir(), 'intake-profile-'));
const pinned = pinServers();

async function load(port, amount) {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: 50,
    amount,
    requests: intakeRequests(signedHeaders(SECRET, amount + 100)),
  });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${result.non2xx} non-2xx, ${result.errors} errors`);
}

/** JIT frames name the function and its source position; the same function keeps its name across
 *  processes once the position and the tier marker are dropped. */
function symbolName(raw) {
  if (/^0x[0-9a-f]+$/.test(raw)) return '[JIT code without a name]';
  return raw
    .replace(/^JS:[*~^+]?/, 'JS:')
    .replace(/:\d+:\d+$/, '')
    .replace(root.href, '')
    .replace(/\/node_modules\/\.pnpm\/[^/]+\/node_modules\//, '/node_modules/')
    .replace(/^JS:(\S*) \//, 'JS:$1 ');
}

/** Samples per symbol of one target: µs of CPU per request. */
async function profile(target) {
  const server = await startServer(
    SERVER,
    target,
    { NODE_OPTIONS: '--perf-basic-prof' },
    pinned?.cpu ?? null,
  );
  const pid = server.fixtures.pid;
  const data = join(dir, `${pid}.data`);
  try {
    await load(server.port, Number(args.warmup));
    const perf = spawn(
      'perf',
      ['record', '-q', '-e', 'cpu-clock', '-F', String(frequency), '-p', String(pid), '-o', data],
      {
        stdio: 'ignore',
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    await load(server.port, requests);
    perf.kill('SIGINT');
    await new Promise((resolve) => perf.once('exit', resolve));
    const report = execFileSync('perf', ['report', '-i', data, '--stdio', '-n', '--sort', 'sym'], {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const perRequest = new Map();
    for (const line of report.split('\n')) {
      const m = /^\s+[\d.]+%\s+(\d+)\s+\[[.k]\]\s+(.+?)\s*$/.exec(line);
      if (!m) continue;
      const name = symbolName(m[2]);
      const us = (Number(m[1]) / frequency / requests) * 1e6;
      perRequest.set(name, (perRequest.get(name) ?? 0) + us);
    }
    return perRequest;
  } finally {
    await server.stop();
    rmSync(`/tmp/perf-${pid}.map`, { force: true });
  }
}

try {
  const results = {};
  for (const target of RUN) {
    results[target] = await profile(target);
    console.error(`${target}: profiled`);
  }
  const total = (m) => [...m.values()].reduce((a, b) => a + b, 0);
  const base = results[BASELINE];
  const names = new Set(RUN.flatMap((t) => [...results[t].keys()]));
  const diff = (name) =>
    Math.max(...RUN.slice(1).map((t) => Math.abs((results[t].get(name) ?? 0) - (base.get(name) ?? 0))));
  const rows = [...names].sort((a, b) => diff(b) - diff(a)).slice(0, Number(args.top));
  const cell = (v) => v.toFixed(2).padStart(8);
  console.log(
    `µs of CPU per request (perf cpu-clock at ${frequency} Hz over ${requests} requests); first column: ${BASELINE}`,
  );
  console.log(`${RUN.map((t) => t.padStart(28)).join('')}  symbol`);
  console.log(`${RUN.map((t) => cell(total(results[t])).padStart(28)).join('')}  (all)`);
  for (const name of rows)
    console.log(`${RUN.map((t) => cell(results[t].get(name) ?? 0).padStart(28)).join('')}  ${name}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
