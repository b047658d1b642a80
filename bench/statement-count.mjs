#!/usr/bin/env node
// How many SQL statements each auth route sends to Postgres: sign-up, login (no MFA, with a
// refresh token), refresh, /auth/me. The pool handed to `postgresStores` is a wrapper that
// counts every statement, on the pool and on clients checked out for a transaction (BEGIN and
// COMMIT count: each is a round trip). Each route runs through `ph.handle()`, the neutral
// handler both adapters call, after one warm-up of the same route (first-use lookups, such as
// settings, are not what a request costs once the process runs).
//
//   node bench/statement-count.mjs [--verbose] [--no-write]
//
// Needs `pnpm run build` and a Postgres server: DATABASE_URL, else
// postgres://postgres@127.0.0.1:5432/test; works in a schema of its own, dropped after.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { built, writeSection } from './lib.mjs';

const { values: args } = parseArgs({
  options: { verbose: { type: 'boolean', default: false }, 'no-write': { type: 'boolean', default: false } },
});
const pg = createRequire(new URL('../packages/postgres/package.json', import.meta.url))('pg');
const { createPostern, silentLogger } = await built('core');
const { migrate, postgresStores } = await built('postgres');

const url = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const schema = `ph_count_${randomBytes(4).toString('hex')}`;
const pool = new pg.Pool({ connectionString: url, max: 4 });

/** Statements sent since the last `take()`: the start of each, whitespace folded, no schema. */
let log = [];
const note = (text) => {
  const line = String(text).replaceAll(`"${schema}".`, '').replace(/\s+/g, ' ').trim();
  log.push(line.length > 100 ? `${line.slice(0, 100)}…` : line);
};
const take = () => {
  const out = log;
  log = [];
  return out;
};
const counted = {
  query(text, values) {
    note(text);
    return pool.query(text, values);
  },
  async connect() {
    const client = await pool.connect();
    return {
      query(text, values) {
        note(text);
        return client.query(text, values);
      },
      release: (err) => client.release(err),
      on: (event, listener) => client.on(event, listener),
      removeListener: (event, listener) => client.removeListener(event, listener),
    };
  },
  on: (event, listener) => pool.on(event, listener),
};

const rows = [];
try {
  await migrate(pool, { schema });
  const ph = createPostern({
    issuer: 'https://bench.test',
    audience: 'bench',
    logger: silentLogger,
    stores: postgresStores({ pool: counted, schema }),
  });
  const send = async (method, path, body, headers = {}) => {
    const out = await ph.handle({
      method,
      path,
      headers: {
        ...(body ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body ? Buffer.from(JSON.stringify(body)) : null,
      ip: '127.0.0.1',
    });
    if (!out || out.status >= 300) throw new Error(`${method} ${path}: ${out?.status} ${out?.body}`);
    return out.body ? JSON.parse(out.body.toString()) : null;
  };
  const password = 'Tangerine-Orbit-Velvet-4821';
  const user = (i) => ({ name: `User ${i}`, email: `user${i}@example.test`, password });
  // One warm-up of each route, then the counted request.
  await send('POST', '/auth/signup', user(0));
  take();
  await send('POST', '/auth/signup', user(1));
  rows.push(['`POST /auth/signup`', take()]);
  await send('POST', '/auth/login', { email: user(0).email, password, refreshToken: true });
  take();
  const login = await send('POST', '/auth/login', { email: user(1).email, password, refreshToken: true });
  rows.push(['`POST /auth/login` (no MFA, with a refresh token)', take()]);
  await send('POST', '/auth/login', { email: user(1).email, password });
  rows.push(['`POST /auth/login` (no MFA, access token only)', take()]);
  const first = await send('POST', '/auth/refresh', { refreshToken: login.refreshToken });
  take();
  await send('POST', '/auth/refresh', { refreshToken: first.refreshToken });
  rows.push(['`POST /auth/refresh`', take()]);
  const bearer = { authorization: `Bearer ${login.accessToken}` };
  await send('GET', '/auth/me', null, bearer);
  take();
  await send('GET', '/auth/me', null, bearer);
  rows.push(['`GET /auth/me`', take()]);
  await ph.close();
} finally {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
}

const table = [
  '| request | statements |',
  '|---|---:|',
  ...rows.map(([name, statements]) => `| ${name} | ${statements.length} |`),
].join('\n');
console.log(table);
if (args.verbose) {
  for (const [name, statements] of rows) {
    console.log(`\n${name}`);
    for (const s of statements) console.log(`  ${s}`);
  }
}
if (!args['no-write']) {
  const lists = rows
    .map(([name, statements]) => `${name}:\n\n${statements.map((s, i) => `${i + 1}. \`${s}\``).join('\n')}`)
    .join('\n\n');
  writeSection(
    'Statements per request (Postgres)',
    `## Statements per request (Postgres)

\`bench/statement-count.mjs\` counts the SQL statements each auth route sends through
\`@postern/postgres\` (statements on the pool and inside transactions; \`BEGIN\` and \`COMMIT\`
count, since each is a round trip), for a request after one warm-up of the same route, with
the default options (throttle, session cap and ended-session feed on).

${table}

A login's statements, each one round trip: the throttle checks the attempt against its three
buckets (per address, per email and address, per email) in one call of the
\`limiter_consume_in_order\` function (a refused attempt is counted in the refusing bucket only,
decision 0153); the user is read by email; the right password gives the buckets back, clears the
email-and-address bucket and reads-and-clears the account's failure counter (for the
failed-attempts notice) in one \`UPDATE\`; the user's second steps (factors and passkeys) come in
one read; the session, its refresh token and the eviction of sessions over the per-user cap
(which feeds the ended-session list) are one call of the \`create_session\` function, under the
per-user lock; last, the user is read \`FOR SHARE\`, so a password reset or disable committing
meanwhile ends the new session (docs/decisions/0152-login-round-trips.md). For comparison,
better-auth 1.7.25 on the same Postgres sends 3 statements for a login, 2 for a session check
and 6 for a sign-up.

<details><summary>The statements, in order</summary>

${lists}

</details>

Measured ${new Date().toISOString().slice(0, 10)}. Reproduce with \`node bench/statement-count.mjs --verbose\`.
`,
  );
  console.log('written to docs/performance.md');
}
