import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { request } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TEST_ENV } from './example-app.js';

/** The example's processes as `pnpm start` / `pnpm worker` run them (`exec node --import tsx`),
 *  so signals reach the app itself. */
function run(app: string, script: 'server' | 'worker', env: Record<string, string>): ChildProcess {
  const cwd = fileURLToPath(new URL(`../../${app}/`, import.meta.url));
  return spawn(process.execPath, ['--import', 'tsx', `src/${script}.ts`], {
    cwd,
    env: { PATH: process.env.PATH ?? '', ...TEST_ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

async function exited(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c) => {
    stdout += c;
  });
  child.stderr!.on('data', (c) => {
    stderr += c;
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

/** The URL the server prints once it listens. */
async function listening(child: ChildProcess): Promise<string> {
  let seen = '';
  for await (const chunk of child.stdout!) {
    seen += chunk;
    const m = /listening on (http:\/\/\S+):/.exec(seen);
    if (m) return m[1]!;
  }
  throw new Error(`exited before listening: ${seen}`);
}

describe.each(['express-app', 'fastify-app'])('%s processes', (app) => {
  it('stop at a bad setting with one JSON line on stderr that names it, no stack and exit 1', async () => {
    const cases: Array<['server' | 'worker', Record<string, string>, string]> = [
      ['server', { PORT: 'abc' }, 'PORT'],
      ['server', { SMTP_URL: 'not-a-url' }, 'SMTP_URL'],
      ['worker', {}, 'DATABASE_URL'],
    ];
    for (const [script, env, variable] of cases) {
      const { code, stderr } = await exited(run(app, script, env));
      expect(code, variable).toBe(1);
      const lines = stderr.trim().split('\n');
      expect(lines, stderr).toHaveLength(1);
      const line = JSON.parse(lines[0]!) as Record<string, unknown>;
      expect(line).toMatchObject({
        level: 50,
        event: 'startup_failed',
        error: 'ConfigError',
        msg: 'start-up failed',
      });
      expect(line.reason).toContain(variable);
      expect(stderr).not.toContain('not-a-url');
      expect(stderr).not.toMatch(/\n\s+at /);
    }
  });

  it('stop at an unreachable database naming what to check and the address tried', async () => {
    const { code, stderr } = await exited(
      run(app, 'server', { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' }),
    );
    expect(code).toBe(1);
    const line = JSON.parse(stderr.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(line).toMatchObject({ event: 'startup_failed', error: 'StoreError', check: 'DATABASE_URL' });
    expect(line.cause).toMatch(/ECONNREFUSED 127\.0\.0\.1:1\b/);
  });

  it('stop at a database that accepts connections but never answers, instead of hanging', async () => {
    // A partition or a stuck proxy: the TCP handshake works, the server says nothing.
    const silent = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const { port } = silent.address() as AddressInfo;
    try {
      const started = Date.now();
      const { code, stderr } = await exited(
        run(app, 'server', { DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/none` }),
      );
      expect(code).toBe(1);
      expect(Date.now() - started).toBeLessThan(30_000);
      const line = JSON.parse(stderr.trim().split('\n').at(-1)!) as Record<string, unknown>;
      expect(line).toMatchObject({ event: 'startup_failed', error: 'StoreError', check: 'DATABASE_URL' });
      expect(line.cause).toMatch(/timeout/i);
    } finally {
      silent.close();
    }
  }, 40_000);

  it('finish a request in flight on SIGTERM, ignore a repeated signal, then exit 0', async () => {
    const child = run(app, 'server', {});
    const done = exited(child);
    const url = await listening(child);
    const body = JSON.stringify({ email: 'nobody@example.test', password: 'wrong-password-1' });
    const req = request(`${url}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    const answered = once(req, 'response');
    // Half the body out, so the request is in flight when the signals come.
    req.write(body.slice(0, 10));
    await new Promise((r) => setTimeout(r, 200));
    // A terminal's Ctrl-C reaches pnpm and the app: two signals.
    child.kill('SIGTERM');
    child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    req.end(body.slice(10));
    const [res] = (await answered) as [import('node:http').IncomingMessage];
    res.resume();
    expect(res.statusCode).toBe(401);
    expect((await done).code).toBe(0);
  });
});
