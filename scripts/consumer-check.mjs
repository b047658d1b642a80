// The packages as a new user gets them: `pnpm pack` every package, install the tarballs with npm
// into fresh apps under the system's temp directory (outside the workspace, so nothing of it
// resolves), then run and type-check what the README shows. Needs `pnpm run build` first.
//
//   node scripts/consumer-check.mjs          everything (what `pnpm check` runs)
//   node scripts/consumer-check.mjs --docs   only the documentation samples (type-check)
//   KEEP=1 node scripts/consumer-check.mjs   keep the temp apps to look into
//
// What it covers, and why: docs/decisions/0007-consumer-check.md.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import ts from 'typescript';
import { extractSamples, materialize } from './doc-samples.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const framesDir = join(root, 'scripts/doc-frames');
const PACKAGES = ['core', 'express', 'fastify', 'postgres', 'testkit', 'client', 'inbox'];
// What reading mail needs (in @postern/inbox), and everything only they pull in: none of it may
// come with an app that installs core and an adapter alone.
const MAIL_PACKAGES = [
  'mailparser',
  'libmime',
  'html-to-text',
  'entities',
  'encoding-japanese',
  'linkify-it',
  'tlds',
  '@zone-eu/mailsplit',
  'libbase64',
  'libqp',
  'htmlparser2',
  'domhandler',
  'domutils',
  'dom-serializer',
  'domelementtype',
  'selderee',
  '@selderee/plugin-htmlparser2',
  'parseley',
  'leac',
  'peberminta',
  'deepmerge-ts',
  'he',
  'punycode.js',
  'uc.micro',
];
const docsOnly = process.argv.includes('--docs');
// A Postgres server whose user may CREATE DATABASE (the same default as the Postgres tests).
const DATABASE = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const failures = [];
const started = Date.now();
const log = (msg) => console.log(`[consumer-check ${((Date.now() - started) / 1000).toFixed(1)}s] ${msg}`);

/** A check that did not hold: reported by its message alone (no stack trace to read past). */
class Failure extends Error {}

/** Runs `cmd`; resolves with its output, rejects with it (and the exit code) on failure. */
function run(cmd, args, { cwd, env = {}, timeoutMs = 180_000, input } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else
        reject(
          new Failure(
            `\`${cmd} ${args.join(' ')}\` in ${cwd} ended with ${signal ?? `exit code ${code}`}:\n${out}`,
          ),
        );
    });
    child.stdin.end(input);
  });
}

async function stage(name, fn) {
  const t = Date.now();
  try {
    await fn();
    log(`ok   ${name} (${((Date.now() - t) / 1000).toFixed(1)}s)`);
    return true;
  } catch (e) {
    failures.push(name);
    log(
      `FAIL ${name}\n${String(e instanceof Failure ? e.message : (e?.stack ?? e)).replace(/^/gm, '     ')}`,
    );
    return false;
  }
}

function check(ok, what) {
  if (!ok) throw new Failure(what);
}

// ---------------------------------------------------------------------------------------------
// Pack, and check what a tarball holds.

function tarballOf(dir, pkg) {
  const found = readdirSync(dir).filter((f) => f.startsWith(`postern-${pkg}-`) && f.endsWith('.tgz'));
  check(
    found.length === 1,
    `expected one tarball of @postern/${pkg} in ${dir}, found ${found.join(', ') || 'none'}`,
  );
  return join(dir, found[0]);
}

async function packAll(dir) {
  for (const pkg of PACKAGES) {
    const pkgDir = join(root, 'packages', pkg);
    check(
      existsSync(join(pkgDir, 'dist')),
      `packages/${pkg}/dist is missing: run \`pnpm run build\` before the consumer check`,
    );
    await run('pnpm', ['pack', '--pack-destination', dir], { cwd: pkgDir });
  }
  const versions = Object.fromEntries(
    PACKAGES.map((pkg) => [
      `@postern/${pkg}`,
      JSON.parse(readFileSync(join(root, 'packages', pkg, 'package.json'))).version,
    ]),
  );
  for (const pkg of PACKAGES) {
    const tgz = tarballOf(dir, pkg);
    const files = (await run('tar', ['-tzf', tgz], { cwd: dir })).trim().split('\n');
    const manifest = JSON.parse(await run('tar', ['-xzOf', tgz, 'package/package.json'], { cwd: dir }));
    const where = `@postern/${pkg} tarball`;
    check(
      !files.some((f) => f.endsWith('.map')),
      `${where} ships source maps: ${files.filter((f) => f.endsWith('.map'))}`,
    );
    for (const f of files.filter((f) => f.endsWith('.d.ts') || f.endsWith('.d.cts'))) {
      const text = await run('tar', ['-xzOf', tgz, f], { cwd: dir });
      check(text.replace(/^#!.*\n?/, '').trim() !== '', `${where} ships ${f}, which declares nothing`);
    }
    check(
      !manifest.scripts,
      `${where} ships scripts (${Object.keys(manifest.scripts ?? {})}) that need the workspace`,
    );
    check(
      /^>=20\.19/.test(manifest.engines?.node ?? ''),
      `${where}: engines.node is ${manifest.engines?.node}`,
    );
    for (const field of ['repository', 'homepage', 'bugs', 'keywords', 'license'])
      check(manifest[field], `${where} has no ${field}`);
    for (const [dep, range] of Object.entries({ ...manifest.dependencies, ...manifest.peerDependencies }))
      check(
        !/^(workspace|file|link):/.test(range),
        `${where} depends on ${dep}@${range}, which no registry serves`,
      );
    // The testkit's mail catcher parses what it receives (a dev dependency of a host).
    for (const dep of Object.keys(manifest.dependencies ?? {}))
      check(
        !MAIL_PACKAGES.includes(dep) || pkg === 'inbox' || pkg === 'testkit',
        `${where} depends on ${dep}: only @postern/inbox (and the testkit) may`,
      );
    for (const [dep, range] of Object.entries(manifest.dependencies ?? {}))
      if (versions[dep])
        check(
          range === `^${versions[dep]}`,
          `${where} depends on ${dep}@${range}, not ^${versions[dep]} (the packed one)`,
        );
  }
  const core = JSON.parse(
    await run('tar', ['-xzOf', tarballOf(dir, 'core'), 'package/package.json'], { cwd: dir }),
  );
  // Whether the packed version is in its range, npm checks when the full app installs both.
  check(
    core.peerDependencies?.['@postern/inbox'] &&
      core.peerDependenciesMeta?.['@postern/inbox']?.optional === true,
    '@postern/core declares @postern/inbox an optional peer dependency: ' +
      JSON.stringify({ peer: core.peerDependencies, meta: core.peerDependenciesMeta }),
  );
}

// ---------------------------------------------------------------------------------------------
// The temp apps.

async function createApp(base, name, { tarballs, deps, type = 'module' }) {
  const dir = join(base, name);
  mkdirSync(dir, { recursive: true });
  const dependencies = Object.fromEntries(tarballs.map(([pkg, tgz]) => [`@postern/${pkg}`, `file:${tgz}`]));
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify(
      { name: `consumer-${name}`, private: true, type, dependencies: { ...dependencies, ...deps } },
      null,
      2,
    ),
  );
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], {
    cwd: dir,
    timeoutMs: 300_000,
    // npm's defaults, as a new user has them: not the workspace's engine-strict from pnpm's
    // environment (Fastify's light-my-request pulls cookie@2, which declares Node 22, and is a
    // warning there). Postern's own `engines` are checked in the tarballs instead.
    env: { npm_config_engine_strict: 'false' },
  });
  return dir;
}

/** TypeScript of a README sample as Node runs it (the app has no TypeScript of its own). */
function transpile(code, module = ts.ModuleKind.ESNext) {
  return ts.transpileModule(code, { compilerOptions: { module, target: ts.ScriptTarget.ES2022 } }).outputText;
}

// Makes `listen(3000)` (the port the README samples use) listen on a free port, and prints the
// port: the samples run unchanged beside whatever else uses port 3000 on this machine.
const ANY_PORT = `import net from 'node:net';
const listen = net.Server.prototype.listen;
let told = false;
net.Server.prototype.listen = function (...args) {
  if (args[0] === 3000) args[0] = 0;
  else if (args[0] && typeof args[0] === 'object' && args[0].port === 3000) args[0] = { ...args[0], port: 0 };
  this.once('listening', () => {
    const a = this.address();
    if (!told && a && typeof a === 'object') { told = true; console.log('CONSUMER_CHECK_PORT ' + a.port); }
  });
  return listen.apply(this, args);
};
`;

/** Starts `file` in `cwd` with Node and resolves with `{ url, stop }` once it listens. */
function startApp(cwd, file, env = {}) {
  writeFileSync(join(cwd, 'any-port.mjs'), ANY_PORT);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', './any-port.mjs', file], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Failure(`${file} did not listen within 30 s:\n${out}`));
    }, 30_000);
    const onData = (d) => {
      out += d;
      const m = /CONSUMER_CHECK_PORT (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({
          url: `http://127.0.0.1:${m[1]}`,
          output: () => out,
          stop: () =>
            new Promise((done) => {
              if (child.exitCode !== null) return done();
              child.once('exit', done);
              child.kill('SIGTERM');
              setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
            }),
        });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Failure(`${file} exited with ${code} before listening:\n${out}`));
    });
  });
}

/** What a new user does with a mounted app, over real HTTP: every answer checked. */
async function exercise(url, guarded) {
  const call = async (method, path, { json, bearer } = {}) => {
    const headers = {};
    if (json !== undefined) headers['content-type'] = 'application/json';
    if (bearer) headers.authorization = `Bearer ${bearer}`;
    const res = await fetch(url + path, {
      method,
      headers,
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    const text = await res.text();
    let body = text;
    try {
      body = JSON.parse(text);
    } catch {}
    return { status: res.status, type: res.headers.get('content-type') ?? '', body };
  };
  const expect = (r, status, what) =>
    check(r.status === status, `${what}: expected ${status}, got ${r.status} ${JSON.stringify(r.body)}`);

  const openapi = await call('GET', '/auth/openapi.json');
  expect(openapi, 200, 'GET /auth/openapi.json');
  check(
    /^3\.1/.test(openapi.body.openapi) && openapi.body.paths['/auth/login'],
    'the OpenAPI document lists /auth/login',
  );
  const jwks = await call('GET', '/auth/.well-known/jwks.json');
  expect(jwks, 200, 'GET /auth/.well-known/jwks.json');
  check(
    jwks.body.keys?.length >= 1 && !jwks.body.keys.some((k) => 'd' in k),
    'the JWKS holds public keys only',
  );

  const email = `new-user-${randomBytes(4).toString('hex')}@example.com`;
  const password = 'correct horse battery staple 42';
  expect(
    await call('POST', '/auth/signup', { json: { name: 'New User', email, password } }),
    201,
    'POST /auth/signup',
  );
  const login = await call('POST', '/auth/login', { json: { email, password, refreshToken: true } });
  expect(login, 200, 'POST /auth/login');
  const { accessToken, refreshToken } = login.body;
  check(accessToken && refreshToken, 'login answers an access token and a refresh token');
  const me = await call('GET', '/auth/me', { bearer: accessToken });
  expect(me, 200, 'GET /auth/me');
  check(me.body.user.email === email, `/auth/me answers the signed-up user, got ${JSON.stringify(me.body)}`);

  const anonymous = await call('GET', guarded);
  expect(anonymous, 401, `GET ${guarded} without a token`);
  check(
    anonymous.type.startsWith('application/problem+json') && anonymous.body.code === 'invalid_token',
    `${guarded} answers invalid_token problem+json`,
  );
  expect(await call('GET', guarded, { bearer: accessToken }), 200, `GET ${guarded} with the access token`);

  expect(
    await call('POST', '/auth/logout', { json: { refreshToken } }),
    204,
    'POST /auth/logout { refreshToken }',
  );
  expect(await call('GET', '/auth/me', { bearer: accessToken }), 401, 'GET /auth/me after logout');
  expect(await call('GET', guarded, { bearer: accessToken }), 401, `GET ${guarded} after logout`);
}

/** The README sample named `name`, transpiled into `dir` as an ES module; returns its file name. */
function writeSample(samples, name, dir, module = ts.ModuleKind.ESNext) {
  const sample = samples.find((s) => s.name === name);
  check(sample, `no README sample named ${name} (<!-- sample: ${name} --> before its fence)`);
  const file = name.replace(/\.ts$/, module === ts.ModuleKind.CommonJS ? '.cjs' : '.mjs');
  writeFileSync(join(dir, file), transpile(sample.code, module));
  return file;
}

async function runSampleApp(dir, samples, name, guarded) {
  const file = writeSample(samples, name, dir);
  const app = await startApp(dir, file);
  try {
    await exercise(app.url, guarded);
  } catch (e) {
    e.message += `\n--- ${name} output ---\n${app.output()}`;
    throw e;
  } finally {
    await app.stop();
  }
}

/** An auth-only app (core and an adapter, no @postern/inbox) carries no mail-reading package;
 *  prints how many packages it installed and their size on disk. */
async function checkAuthOnly(dir) {
  const listed = (await run('npm', ['ls', '--all', '--parseable'], { cwd: dir })).trim().split('\n');
  const paths = new Set(listed.filter((p) => p.includes('node_modules')));
  const names = new Set(
    [...paths].map((p) => p.slice(p.lastIndexOf('node_modules') + 'node_modules/'.length)),
  );
  const found = MAIL_PACKAGES.filter((name) => names.has(name));
  check(found.length === 0, `the auth-only app installed ${found.join(', ')}`);
  check(!names.has('@postern/inbox'), 'the auth-only app installed @postern/inbox');
  const kib = Number((await run('du', ['-sk', 'node_modules'], { cwd: dir })).split(/\s/)[0]);
  log(`     auth-only install: ${paths.size} packages, ${(kib / 1024).toFixed(1)} MiB of node_modules`);
}

// ---------------------------------------------------------------------------------------------
// Documentation samples, type-checked in the app against the installed tarballs.

const TSCONFIGS = {
  nodenext: { module: 'nodenext', moduleResolution: 'nodenext' },
  bundler: { module: 'preserve', moduleResolution: 'bundler' },
};

function writeDocSamples(dir, samples) {
  const samplesDir = join(dir, 'samples');
  rmSync(samplesDir, { recursive: true, force: true });
  mkdirSync(samplesDir, { recursive: true });
  const where = new Map();
  for (const s of samples) {
    const { file, text, offset } = materialize(s, framesDir);
    writeFileSync(join(samplesDir, file), text);
    where.set(file, { sample: s, offset });
  }
  return { samplesDir, where };
}

async function typecheck(dir, name, include, where, { skipLibCheck = false } = {}) {
  const config = {
    compilerOptions: {
      ...TSCONFIGS[name],
      target: 'es2022',
      lib: ['es2023'],
      types: ['node'],
      strict: true,
      noEmit: true,
      // The published .d.ts files are checked too (once), as a consumer's strictest set-up would.
      skipLibCheck,
      esModuleInterop: true,
      allowJs: true,
      checkJs: true,
    },
    include,
  };
  const file = `tsconfig.${name}.json`;
  writeFileSync(join(dir, file), JSON.stringify(config, null, 2));
  try {
    await run(join(dir, 'node_modules/.bin/tsc'), ['-p', file, '--pretty', 'false'], { cwd: dir });
  } catch (e) {
    // Point at the document line of each error, not at the temp file.
    const mapped = e.message.replace(/^samples\/([^(\s]+)\((\d+),(\d+)\)/gm, (whole, f, l, c) => {
      const w = where?.get(f);
      if (!w) return whole;
      const line = Number(l) - w.offset;
      const inFrame = line < 1 || line > w.sample.code.split('\n').length;
      return inFrame
        ? `${w.sample.doc}:${w.sample.line} (in frame scripts/doc-frames/${w.sample.frame}.ts at line ${l})`
        : `${w.sample.doc}:${w.sample.line + line - 1}:${c}`;
    });
    throw new Failure(
      `type-check (${name}) failed:\n${mapped}\n` +
        'A documentation sample is a complete module (its imports, every name declared), or starts with ' +
        '`// fragment: inside <frame>` (see scripts/doc-frames/README.md).',
    );
  }
}

// ---------------------------------------------------------------------------------------------
// The consumer's own files (not in the README).

const CJS_APP = `'use strict';
// A CommonJS app: require() of every package, Postern on Express, served over HTTP.
const express = require('express');
const { createPostern } = require('@postern/core');
const { memoryStores } = require('@postern/core/memory');
const { consoleMailer } = require('@postern/core/mailers');
const { checkSignature } = require('@postern/core/webhook');
const { StoreError } = require('@postern/core/ports');
const { posternRouter, posternErrorHandler, principalOf, requireAuth } = require('@postern/express');
const { posternPlugin } = require('@postern/fastify');
const { migrate, postgresStores } = require('@postern/postgres');
// (@postern/testkit is ESM only: vitest refuses require().)
for (const [name, value] of Object.entries({ posternPlugin, migrate, postgresStores, consoleMailer, checkSignature, StoreError }))
  if (typeof value !== 'function') throw new Error(name + ' is not a function through require()');

const ph = createPostern({ issuer: 'https://app.example', audience: 'app', stores: memoryStores() });
const app = express();
app.use(posternRouter(ph));
app.get('/api/orders', requireAuth(ph), (_req, res) => res.json([{ userId: principalOf(res).userId }]));
app.use(posternErrorHandler());
app.listen(3000);
`;

const TYPED_CJS = `// Types through require(): the .d.cts of every entry point.
import { createPostern, type Postern, type PosternOptions } from '@postern/core';
import { memoryStores } from '@postern/core/memory';
import { consoleMailer } from '@postern/core/mailers';
import { StoreError, type UserStore } from '@postern/core/ports';
import { checkSignature } from '@postern/core/webhook';
import { posternRouter } from '@postern/express';
import { posternPlugin } from '@postern/fastify';
import { postgresStores } from '@postern/postgres';

const options: PosternOptions = { issuer: 'https://app.example', audience: 'app', stores: memoryStores(), mailer: consoleMailer() };
const ph: Postern = createPostern(options);
const users: UserStore | undefined = options.stores?.users;
export const used = [ph, posternRouter, posternPlugin, postgresStores, checkSignature, StoreError, users];
`;

const DB_TOOL = `import pg from 'pg';
const [action, name] = process.argv.slice(2);
const client = new pg.Client({ connectionString: process.env.ADMIN_URL });
await client.connect();
try {
  if (action === 'create') await client.query('CREATE DATABASE "' + name + '"');
  else await client.query('DROP DATABASE IF EXISTS "' + name + '" WITH (FORCE)');
} finally {
  await client.end();
}
`;

// One process per step: the second login runs in a new process against the same database.
const PG_APP = `import pg from 'pg';
import { createPostern } from '@postern/core';
import { postgresStores } from '@postern/postgres';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
const ph = createPostern({ issuer: 'https://app.example', audience: 'app', stores: postgresStores({ pool }) });
const email = 'restart@example.com';
const password = 'correct horse battery staple 42';
try {
  if (process.argv[2] === 'signup') await ph.auth.signup({ name: 'Restart', email, password });
  const session = await ph.auth.login({ email, password });
  if (!('accessToken' in session)) throw new Error('login answered ' + JSON.stringify(session));
  const principal = await ph.auth.verifyAccessToken(session.accessToken);
  console.log('LOGGED_IN ' + principal.userId);
} finally {
  await ph.close();
  await pool.end();
}
`;

// An inbound mail given as raw MIME (an HTML-only body, an encoded subject), handed to the
// inbox's consumer as the outbox does: stored with @postern/inbox installed, refused with an
// error naming it otherwise (and the log's error line). Prints INBOX_STORED or INBOX_REFUSED. As ESM, and as CommonJS
// (`require`), which also converts HTML through the package's CommonJS build.
const INBOX_SCRIPT = (cjs) => `${
  cjs
    ? "'use strict';\nconst { createPostern } = require('@postern/core');\n(async () => {"
    : "import { createPostern } from '@postern/core';"
}
const quiet = () => {};
const logger = { debug: quiet, info: quiet, warn: quiet, error: (fields) => console.log('LOG_ERROR ' + fields.event) };
const ph = createPostern({ issuer: 'https://app.example', audience: 'app', logger });
const { user } = await ph.auth.signup({ name: 'Owner', email: 'owner@example.com', password: 'correct horse battery staple 42' });
const account = await ph.inbox.createAccount(user.id, { address: 'support@example.com', name: 'Support' });
const raw = [
  'From: Ann <ann@customer.example>',
  'To: support@example.com',
  'Subject: =?UTF-8?B?R3LDvMOfZSBmcm9tIE1JTUU=?=',
  'Message-ID: <consumer-check-1@customer.example>',
  'MIME-Version: 1.0',
  'Content-Type: text/html; charset=utf-8',
  '',
  '<p>Hello <b>there</b></p>',
].join('\\r\\n');
const event = { id: 'evt-1', name: 'inbox.mail.webhook.inbound.received', attempt: 1, createdAt: new Date(),
  payload: JSON.stringify({ type: 'email.received', data: { raw } }) };
try {
  const result = await ph.inbox.consumers.inbound(event);
  const { threads } = await ph.inbox.listThreads(user.id, account.id);
  const { messages } = await ph.inbox.getThread(user.id, threads[0].id);
  const { subject, text } = messages[0];
  console.log('INBOX_STORED ' + JSON.stringify({ outcome: result && result.outcome, subject, text }));
} catch (e) {
  console.log('INBOX_REFUSED ' + e.message);
} finally {
  await ph.close();
}${
  cjs
    ? "\nconst { htmlToText } = require('@postern/inbox');\nhtmlToText('<p>a <i>b</i></p>').then((t) => console.log('INBOX_CJS_TEXT ' + t));\n})();"
    : ''
}
`;

const STORED = { outcome: 'stored', subject: 'Grüße from MIME', text: 'Hello there' };

/** Runs the inbox script in `dir`; resolves with what it printed. */
async function inboxScript(dir, cjs) {
  const file = cjs ? 'inbox.cjs' : 'inbox.mjs';
  writeFileSync(join(dir, file), INBOX_SCRIPT(cjs));
  return run(process.execPath, [file], { cwd: dir, timeoutMs: 60_000 });
}

const VITEST_CONFIG = `import { defineConfig } from 'vitest/config';
export default defineConfig({ test: { testTimeout: 30_000, hookTimeout: 60_000, include: ['suites/**/*.test.ts'] } });
`;

// ---------------------------------------------------------------------------------------------

async function main() {
  const { samples, problems } = extractSamples(root, framesDir);
  if (problems.length) {
    failures.push('documentation samples');
    log(`FAIL documentation samples:\n${problems.map((p) => `     ${p}`).join('\n')}`);
  }
  const base = mkdtempSync(join(tmpdir(), 'postern-consumer-'));
  log(`apps in ${base}`);
  const tarballs = join(base, 'tarballs');
  mkdirSync(tarballs);
  let dbName;
  try {
    if (!(await stage('pack every package; tarball contents', () => packAll(tarballs)))) return;
    const tgz = (pkg) => [pkg, tarballOf(tarballs, pkg)];
    const full = {
      tarballs: PACKAGES.map(tgz),
      deps: {
        express: '^5.1.0',
        fastify: '^5.4.0',
        pg: '^8.16.0',
        vitest: '~4.1.0',
        typescript: '~5.9.3',
        '@types/express': '^5.0.0',
        '@types/node': '^20.19.0',
        '@types/pg': '^8.15.0',
        // What docs/verify-tokens.md's services import.
        '@fastify/jwt': '^10.2.8',
        '@types/jsonwebtoken': '^9.0.10',
        'express-jwt': '^8.5.1',
        'fast-jwt': '^6.3.6',
        'get-jwks': '^11.0.3',
        jsonwebtoken: '^9.0.3',
        'jwks-rsa': '^4.1.0',
        // What the client's React binding samples import.
        react: '^19.0.0',
        '@types/react': '^19.0.0',
      },
    };
    let fullDir;
    let expressDir;
    let fastifyDir;
    // Each app installs only what its README section says to install, so a missing dependency
    // shows; installs run side by side.
    await Promise.all([
      stage('npm install: the full app (every package, TypeScript, vitest, pg, JWT verifiers)', async () => {
        fullDir = await createApp(base, 'full-app', full);
      }),
      !docsOnly &&
        stage('npm install: @postern/core @postern/express express (auth only)', async () => {
          expressDir = await createApp(base, 'express-app', {
            tarballs: [tgz('core'), tgz('express')],
            deps: { express: '^5.1.0' },
          });
        }),
      !docsOnly &&
        stage('npm install: @postern/core @postern/fastify fastify', async () => {
          fastifyDir = await createApp(base, 'fastify-app', {
            tarballs: [tgz('core'), tgz('fastify')],
            deps: { fastify: '^5.4.0' },
          });
        }),
    ]);

    if (!fullDir && docsOnly) return;
    // Three independent groups side by side: type-checks, the apps over HTTP, the vitest suites.
    const typechecks = async () => {
      if (!fullDir) return;
      const { samplesDir, where } = writeDocSamples(fullDir, samples);
      writeFileSync(join(samplesDir, 'consumer.cts'), TYPED_CJS);
      log(`${samples.length} documentation samples in ${relative(base, samplesDir)}`);
      await stage('type-check: documentation samples and CommonJS types, strict, module nodenext', () =>
        typecheck(fullDir, 'nodenext', ['samples'], where),
      );
      await stage('type-check: documentation samples, strict, moduleResolution bundler', () =>
        typecheck(fullDir, 'bundler', ['samples/**/*.ts', 'samples/**/*.mjs'], where, { skipLibCheck: true }),
      );
    };
    if (docsOnly) return await typechecks();

    const apps = async () => {
      if (expressDir) {
        await stage(
          'auth-only install (@postern/core @postern/express express): no mail-reading package',
          () => checkAuthOnly(expressDir),
        );
        await stage('auth-only app: an inbound mail is refused, naming @postern/inbox', async () => {
          const out = await inboxScript(expressDir, false);
          check(
            /INBOX_REFUSED .*npm install @postern\/inbox/.test(out) &&
              /LOG_ERROR inbox_mail_reader_missing/.test(out),
            `the inbound consumer names the package to install:\n${out}`,
          );
        });
      }
      if (fullDir)
        await stage('inbox app (npm install @postern/inbox): raw MIME stored, ESM and CommonJS', async () => {
          for (const cjs of [false, true]) {
            const out = await inboxScript(fullDir, cjs);
            const stored = /INBOX_STORED (.*)/.exec(out)?.[1];
            check(
              stored === JSON.stringify(STORED),
              `${cjs ? 'CommonJS' : 'ESM'}: the mail is stored as ${JSON.stringify(STORED)}:\n${out}`,
            );
            if (cjs)
              check(/INBOX_CJS_TEXT a b/.test(out), `require('@postern/inbox') converts HTML:\n${out}`);
          }
        });
      if (expressDir)
        await stage('Express app from the README (ESM), over HTTP', () =>
          runSampleApp(expressDir, samples, 'express-app.ts', '/api/orders'),
        );
      if (fastifyDir)
        await stage('Fastify app from the README (ESM), over HTTP', () =>
          runSampleApp(fastifyDir, samples, 'fastify-app.ts', '/api/orders'),
        );
      if (!fullDir) return;
      await stage('CommonJS app (require), over HTTP', async () => {
        writeFileSync(join(fullDir, 'app.cjs'), CJS_APP);
        const app = await startApp(fullDir, 'app.cjs');
        try {
          await exercise(app.url, '/api/orders');
        } catch (e) {
          e.message += `\n--- app.cjs output ---\n${app.output()}`;
          throw e;
        } finally {
          await app.stop();
        }
      });
      await stage('postern-postgres migrate on a fresh database; login, restart, login', async () => {
        writeFileSync(join(fullDir, 'db.mjs'), DB_TOOL);
        writeFileSync(join(fullDir, 'pg-app.mjs'), PG_APP);
        const name = `postern_consumer_${randomBytes(4).toString('hex')}`;
        await run(process.execPath, ['db.mjs', 'create', name], {
          cwd: fullDir,
          env: { ADMIN_URL: DATABASE },
        }).catch((e) => {
          throw new Failure(
            `could not create a database through ${DATABASE} (start Postgres there, or set DATABASE_URL ` +
              `to a server whose user may CREATE DATABASE):\n${e.message}`,
          );
        });
        dbName = name;
        const url = new URL(DATABASE);
        url.pathname = `/${name}`;
        const env = { DATABASE_URL: url.href };
        const npx = (args) => run('npx', ['--no-install', ...args], { cwd: fullDir, env });
        await npx(['postern-postgres', 'migrate']);
        await npx(['postern-postgres', 'migrate']); // again: nothing to do, still exit 0
        const first = await run(process.execPath, ['pg-app.mjs', 'signup'], { cwd: fullDir, env });
        const second = await run(process.execPath, ['pg-app.mjs', 'login'], { cwd: fullDir, env });
        const id = (out) => /LOGGED_IN (\S+)/.exec(out)?.[1];
        check(
          id(first) && id(first) === id(second),
          `the same user logs in after a restart:\n${first}\n${second}`,
        );
      });
    };

    const suites = async () => {
      if (!fullDir) return;
      await stage(
        'vitest: describeStoreContract on a custom store, describeHttpContract on a custom mount',
        async () => {
          const dir = join(fullDir, 'suites');
          mkdirSync(dir, { recursive: true });
          const tests = samples.filter((s) => s.name?.endsWith('.test.ts') || s.name === 'my-stores.ts');
          for (const t of tests) writeFileSync(join(dir, t.name), t.code);
          check(
            tests.some((t) => t.name === 'my-stores.contract.test.ts') &&
              tests.some((t) => t.name === 'my-server.contract.test.ts'),
            `the README's contract-suite samples are missing (found: ${tests.map((t) => t.name).join(', ') || 'none'})`,
          );
          writeFileSync(join(fullDir, 'vitest.config.mjs'), VITEST_CONFIG);
          const out = await run(join(fullDir, 'node_modules/.bin/vitest'), ['run'], {
            cwd: fullDir,
            timeoutMs: 240_000,
          });
          const passed = /Tests\s+(\d+) passed/.exec(stripVTControlCharacters(out));
          check(passed && Number(passed[1]) > 50, `vitest ran the contract suites:\n${out.slice(-2000)}`);
          log(`     ${passed[0]}`);
        },
      );
    };

    await Promise.all([typechecks(), apps(), suites()]);
  } finally {
    if (dbName)
      await run(process.execPath, ['db.mjs', 'drop', dbName], {
        cwd: join(base, 'full-app'),
        env: { ADMIN_URL: DATABASE },
      }).catch((e) => log(`could not drop database ${dbName}: ${e.message}`));
    if (process.env.KEEP) log(`kept ${base}`);
    // Deleting three node_modules trees takes long on a busy disk, and nothing waits for it.
    else spawn('rm', ['-rf', base], { detached: true, stdio: 'ignore' }).unref();
  }
}

await main().catch((e) => {
  failures.push('consumer check');
  log(`FAIL ${e.stack ?? e}`);
});
if (failures.length) {
  console.error(`\nconsumer check failed: ${failures.join('; ')}`);
  process.exit(1);
}
log('every consumer check passed');
