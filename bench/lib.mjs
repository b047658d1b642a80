// Shared plumbing of the benchmarks: servers in their own processes, medians, the report file.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { fileURLToPath } from 'node:url';

export const root = new URL('..', import.meta.url);

/** A Postern package as users run it: its built ESM (`pnpm run build` first), not the sources
 *  through a transpiler (tsx's helpers would add their own per-call cost). `core/webhook`
 *  names a subpath's entry. */
export async function built(pkg) {
  const [name, ...subpath] = pkg.split('/');
  const entry = new URL(`packages/${name}/dist/${subpath.map((s) => `${s}/`).join('')}index.js`, root);
  if (!existsSync(entry)) throw new Error(`${fileURLToPath(entry)} is missing: run \`pnpm run build\` first`);
  return import(entry.href);
}

/** Gives the server under test a core of its own: pins this process (the load generator) with
 *  all its threads to every CPU but the last, and returns the last one for `startServer`. On a
 *  small machine the two otherwise compete for the same cores, and the ratio then measures how
 *  the scheduler shares them as much as what each server costs. Null where it cannot be done
 *  (one CPU, no `taskset`); the benchmark then runs unpinned. */
export function pinServers() {
  const n = availableParallelism();
  if (n < 2) return null;
  const server = String(n - 1);
  const client = n === 2 ? '0' : `0-${n - 2}`;
  try {
    execFileSync('taskset', ['-a', '-p', '-c', client, String(process.pid)], { stdio: 'ignore' });
  } catch {
    return null;
  }
  return { cpu: server, description: `server on CPU ${server}, load generator on CPU ${client}` };
}

/** Starts `node <script> <target>` (on CPU `cpu` when given, see pinServers) and waits for its
 *  `READY <port> [fixtures]` line; fixtures are base64url JSON. */
export function startServer(script, target, env = {}, cpu = null) {
  const argv = [process.execPath, fileURLToPath(script), target];
  const [command, ...rest] = cpu === null ? argv : ['taskset', '-c', cpu, ...argv];
  const child = spawn(command, rest, {
    cwd: fileURLToPath(root),
    env: { ...process.env, ...env, NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /READY (\d+)(?: (\S+))?\n/.exec(out);
      if (!m) return;
      const fixtures = m[2] ? JSON.parse(Buffer.from(m[2], 'base64url').toString('utf8')) : {};
      resolve({ port: Number(m[1]), fixtures, pid: child.pid, stop: () => stopServer(child) });
    });
    child.on('exit', (code) => reject(new Error(`${target}: server exited with ${code}`)));
  });
}

export function stopServer(child) {
  return new Promise((resolve) => {
    child.removeAllListeners('exit');
    child.once('exit', resolve);
    child.kill('SIGTERM');
  });
}

/** For a server script: announce the port (and fixtures) to `startServer`. */
export function ready(port, fixtures) {
  const tail =
    fixtures === undefined ? '' : ` ${Buffer.from(JSON.stringify(fixtures)).toString('base64url')}`;
  process.stdout.write(`READY ${port}${tail}\n`);
}

/** CPU time (user + system, in µs) the server process has used so far; null off Linux. On a
 *  busy machine CPU per request is steadier than req/s, which also counts time spent waiting
 *  for a core. */
export function cpuMicros(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    // utime and stime are fields 14 and 15 of stat(5), in clock ticks (USER_HZ, 100 on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return null;
  }
}

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The run of `runs` whose req/s is the median. */
export const medianRun = (runs) => runs.find((r) => r.rps === median(runs.map((x) => x.rps)));

export function machine() {
  const cpu = cpus();
  return `${cpu.length} x ${cpu[0]?.model.trim()}, Node ${process.version}`;
}

/** Replaces (or appends) the `## <heading>` section of docs/performance.md. */
export function writeSection(heading, section) {
  const file = new URL('docs/performance.md', root);
  let doc;
  try {
    doc = readFileSync(file, 'utf8');
  } catch {
    doc = '# Performance\n\n';
  }
  const start = doc.indexOf(`## ${heading}\n`);
  if (start === -1) {
    doc = `${doc.trimEnd()}\n\n${section}`;
  } else {
    const end = doc.indexOf('\n## ', start + 1);
    doc = `${doc.slice(0, start)}${section.trimEnd()}\n${end === -1 ? '' : `\n${doc.slice(end + 1)}`}`;
  }
  writeFileSync(file, doc);
}
