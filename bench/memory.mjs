// Memory of the embedded default (in-memory stores), in one process: what each stored item
// keeps on the heap, and whether steady traffic keeps anything once it is done with.
//
//   node bench/memory.mjs [--scale 1]      (re-runs itself with --expose-gc)
//
// Every request goes through `ph.handle()`, the same neutral handler the adapters call, so the
// numbers are those of real routes (validation, limiter, stores) without sockets. Retained
// bytes = heap (V8 heap + array buffers) after a full collection, after minus before, over the
// number of items. Writes the "Memory" section of docs/performance.md.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { built, machine, writeSection } from './lib.mjs';
import { signWebhook } from './signed-webhooks.mjs';
import { SECRET } from './webhook-server.mjs';

if (typeof globalThis.gc !== 'function') {
  const r = spawnSync(process.execPath, ['--expose-gc', ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}

const { values: args } = parseArgs({ options: { scale: { type: 'string', default: '1' } } });
const scale = Number(args.scale);
const n = (count) => Math.max(10, Math.round(count * scale));

const { createPostern } = await built('core');
const PASSWORD = 'Tangerine-Orbit-Velvet-4821';

/** Wall clock plus an offset the run moves forward (retention, expiry). */
let offsetMs = 0;
const clock = { now: () => new Date(Date.now() + offsetMs) };

const ph = createPostern({
  issuer: 'https://bench.test',
  audience: 'bench',
  clock,
  settings: { 'inbox.mail.webhook-secret': SECRET },
  // Cheap hashes so thousands of sign-ups take seconds; a stored hash is the same length
  // whatever the cost parameters (only their digits in its prefix differ).
  passwordHashing: { memoryCost: 64, timeCost: 1 },
  // Limits out of the way except where the run measures them.
  throttle: {
    'signup:ip': { points: 1e9, durationSeconds: 3600 },
    'login:ip': { points: 1e9, durationSeconds: 900 },
    'login:email+ip': { points: 1e9, durationSeconds: 900 },
    'login:email': { points: 1e9, durationSeconds: 900 },
  },
  maxSessionsPerUser: 1e6,
  mailer: { send: async () => {} },
  logger: { info() {}, warn() {}, error() {}, debug() {} },
});

let ipSeq = 0;
async function call(method, path, { json, bearer, headers = {}, raw, ip = '10.0.0.1' } = {}) {
  const body = raw ?? (json === undefined ? null : Buffer.from(JSON.stringify(json)));
  const out = await ph.handle({
    method,
    path,
    headers: {
      host: 'bench.test',
      ...(body ? { 'content-type': 'application/json', 'content-length': String(body.length) } : {}),
      ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
      ...headers,
    },
    body,
    ip,
  });
  const text = out.body === null ? '' : String(out.body);
  return { status: out.status, json: text ? JSON.parse(text) : null };
}

function expectStatus(res, status, what) {
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.json)}`);
  return res.json;
}

async function heap() {
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setImmediate(r));
    globalThis.gc();
  }
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/** Runs `step(i)` `count` times, `width` at once, then `settle()` (e.g. the outbox's drain);
 *  resolves with the heap bytes it left behind. */
async function retained(count, step, width = 50, settle = async () => {}) {
  const before = await heap();
  for (let i = 0; i < count; i += width) {
    await Promise.all(Array.from({ length: Math.min(width, count - i) }, (_, k) => step(i + k)));
  }
  await settle();
  return (await heap()) - before;
}

const deliveredBody = (emailId) =>
  JSON.stringify({
    type: 'email.delivered',
    created_at: new Date().toISOString(),
    data: {
      email_id: emailId,
      from: 'Acme <onboarding@resend.dev>',
      to: ['delivered@resend.dev'],
      subject: 'Sending this example',
      tags: { category: 'confirm_email' },
    },
  });

const receivedBody = (to, i) =>
  JSON.stringify({
    type: 'email.received',
    created_at: new Date().toISOString(),
    data: {
      email_id: randomUUID(),
      message_id: `<${randomUUID()}@customer.test>`,
      from: 'Ann Customer <ann@customer.test>',
      to: [to],
      cc: [],
      subject: `Order ${i} arrived broken`,
      text: 'Hello, the widget in my last order arrived broken. Can you send a new one? Ann'.repeat(3),
      html: null,
      attachments: [],
    },
  });

const rows = [];
const perItem = (what, count, bytes, note = '') => {
  rows.push({ what, count, bytes, per: bytes / count, note });
  console.log(
    `${what}: ${count} -> ${(bytes / 1024).toFixed(0)} KiB, ${(bytes / count).toFixed(0)} B each ${note}`,
  );
};
const steady = [];
const flat = (what, count, bytes) => {
  steady.push({ what, count, bytes });
  console.log(`${what}: ${count} -> ${(bytes / 1024).toFixed(1)} KiB left`);
};

// Warm-up: every route of the run a few hundred times before anything is measured, so compiled
// code and first-time allocations are not counted as retained by the items.
{
  const json = { name: 'Warm Up', email: 'warm@example.test', password: PASSWORD };
  expectStatus(await call('POST', '/auth/signup', { json }), 201, 'warm-up signup');
  for (let i = 0; i < 20; i++) {
    const other = { name: 'Warm Up', email: `warm-${i}@example.test`, password: PASSWORD };
    expectStatus(await call('POST', '/auth/signup', { json: other }), 201, 'warm-up signup');
  }
  for (let i = 0; i < 300; i++) {
    const s = expectStatus(
      await call('POST', '/auth/login', {
        json: { email: json.email, password: PASSWORD, refreshToken: true },
      }),
      200,
      'warm-up',
    );
    const r = expectStatus(
      await call('POST', '/auth/refresh', { json: { refreshToken: s.refreshToken } }),
      200,
      'warm-up',
    );
    expectStatus(await call('GET', '/auth/me', { bearer: r.accessToken }), 200, 'warm-up');
    expectStatus(
      await call('POST', '/auth/logout', { json: { refreshToken: r.refreshToken } }),
      204,
      'warm-up',
    );
    const wrong = { email: `warm-nobody-${i}@example.test`, password: 'Wrong-Password-123' };
    expectStatus(await call('POST', '/auth/login', { json: wrong, ip: '10.2.0.1' }), 401, 'warm-up');
  }
}

// --- stored items --------------------------------------------------------------------------
const emailOf = (i) => `user-${i}@example.test`;
const USERS = n(2000);
perItem(
  'user (sign-up)',
  USERS,
  await retained(USERS, async (i) => {
    const json = { name: `User ${i}`, email: emailOf(i), password: PASSWORD };
    expectStatus(await call('POST', '/auth/signup', { json }), 201, 'signup');
  }),
  'the user record (Argon2id hash, roles) and its email index',
);

const login = (i) =>
  call('POST', '/auth/login', {
    json: { email: emailOf(i % USERS), password: PASSWORD, refreshToken: true },
  });
// The run keeps a refresh token of the first sessions (for logout), about 60 bytes each, in
// the sessions' figure.
const LOGOUTS = n(2000);
const refreshTokens = [];
perItem(
  'session (login with a refresh token)',
  n(5000),
  await retained(n(5000), async (i) => {
    const s = expectStatus(await login(i), 200, 'login');
    if (i <= LOGOUTS) refreshTokens[i] = s.refreshToken;
  }),
  'the session record, its refresh-token hash, its per-user index',
);

let refreshToken = refreshTokens[0];
perItem(
  'refresh rotation (one session, one token after another)',
  n(5000),
  await retained(
    n(5000),
    async () => {
      const s = expectStatus(await call('POST', '/auth/refresh', { json: { refreshToken } }), 200, 'refresh');
      refreshToken = s.refreshToken;
    },
    1,
  ),
  'the rotated-out token hash, kept for theft detection',
);

perItem(
  'logout (ended session)',
  LOGOUTS,
  await retained(LOGOUTS, async (i) => {
    expectStatus(
      await call('POST', '/auth/logout', { json: { refreshToken: refreshTokens[i + 1] } }),
      204,
      'logout',
    );
  }),
  'its entry in the ended-session feed',
);

perItem(
  'throttle key (failed login, a new address and IP each)',
  n(5000),
  await retained(n(5000), async (i) => {
    const res = await call('POST', '/auth/login', {
      json: { email: `nobody-${i}@example.test`, password: 'Wrong-Password-123' },
      ip: `10.1.${(ipSeq >> 8) & 255}.${ipSeq++ & 255}`,
    });
    expectStatus(res, 401, 'failed login');
  }),
  'limiter entries until their window ends',
);

const owner = await call('POST', '/auth/login', { json: { email: emailOf(0), password: PASSWORD } });
const bearer = expectStatus(owner, 200, 'owner login').accessToken;
const account = expectStatus(
  await call('POST', '/inbox/accounts', { bearer, json: { address: 'support@acme.test', name: 'Support' } }),
  201,
  'account',
);

const intake = async (body) => {
  const headers = signWebhook(SECRET, body, Math.floor(clock.now().getTime() / 1000));
  expectStatus(await call('POST', '/inbox/webhook', { raw: Buffer.from(body), headers }), 202, 'webhook');
};
// Under the in-memory stores' caps (20,000 finished events, 20,000 mail events): nothing is dropped.
const deliveries = n(15000);
perItem(
  'webhook accepted, pending in the outbox (~330-byte body)',
  deliveries,
  await retained(deliveries, () => intake(deliveredBody(randomUUID()))),
  'the raw body, the event record, its dedupe key',
);
const beforeDrain = await heap();
await ph.outbox.drain();
perItem(
  'delivery event applied (kept as a mail_event; its message is not known)',
  deliveries,
  (await heap()) - beforeDrain,
  'kept until its retention, or until 20,000 newer events push it out',
);

const inboundCount = n(5000);
perItem(
  'inbound mail: webhook + thread + message (~760-byte body, 240 characters of text)',
  inboundCount,
  await retained(
    inboundCount,
    (i) => intake(receivedBody(account.address, i)),
    50,
    () => ph.outbox.drain(),
  ),
  'its outbox event (not yet purged) included',
);

// --- steady traffic --------------------------------------------------------------------------
const me = async () => {
  expectStatus(await call('GET', '/auth/me', { bearer }), 200, 'me');
};
await retained(n(20000), me); // warm
flat('GET /auth/me', n(100000), await retained(n(100000), me));

// Inbound mail for an address no account owns: the whole pipeline runs (signature, outbox,
// routing, the inbound consumer's parse and account match) and, by design, nothing stays once
// the outbox purges the finished events.
flat(
  'webhook intake to the inbound consumer (no account), delivered and purged, 10 rounds',
  10 * n(20000),
  await (async () => {
    const nobody = (i) => intake(receivedBody('nobody@elsewhere.test', i));
    await retained(n(20000), nobody); // warm
    await ph.outbox.drain();
    offsetMs += 8 * 24 * 3600e3; // past the 7-day retention of what the run delivered so far
    await ph.outbox.purge();
    const before = await heap();
    for (let round = 0; round < 10; round++) {
      await retained(n(20000), nobody);
      await ph.outbox.drain();
      offsetMs += 8 * 24 * 3600e3;
      await ph.outbox.purge();
    }
    return (await heap()) - before;
  })(),
);

const rss = process.memoryUsage().rss;
const kib = (b) => `${(b / 1024).toLocaleString('en-US', { maximumFractionDigits: 1 })} KiB`;
const rotation = rows.find((r) => r.what.startsWith('refresh rotation')).per;
const session = rows.find((r) => r.what.startsWith('session')).per;
// A browser tab open 8 hours a day refreshes every 15 minutes (the default access-token life):
// 32 rotations a day for the 30 days a session lives by default.
const monthOfUse = session + 30 * 32 * rotation;

writeSection(
  'Memory',
  `## Memory

\`bench/memory.mjs\` measures the embedded default (in-memory stores) in one process: each request
goes through \`ph.handle()\`, the neutral handler both adapters call, so validation, limiter and
stores run as they do behind a socket. Retained = V8 heap plus array buffers after a full
collection, after the items minus before, over the number of items; every route runs a few
hundred times before anything is measured. Password hashes are made with cheap Argon2id
parameters (a stored hash has the same length whatever they are).

| item | what stays | count | retained | per item |
|---|---|---:|---:|---:|
${rows.map((r) => `| ${r.what} | ${r.note} | ${r.count.toLocaleString('en-US')} | ${kib(r.bytes)} | ${Math.round(r.per).toLocaleString('en-US')} B |`).join('\n')}

Steady traffic, after a warm-up round of the same requests (what is left once it is done with;
a few tens of KiB either way is the collector's noise):

| traffic | requests | heap left after |
|---|---:|---:|
${steady.map((r) => `| ${r.what} | ${r.count.toLocaleString('en-US')} | ${kib(r.bytes)} |`).join('\n')}

Reading it: a refresh-token rotation keeps the rotated-out token's hash for as long as its
session lives, so that a stolen older token presented later ends the whole family (theft
detection). A session used 8 hours a day with the default 15-minute access tokens rotates 32
times a day; after the default 30 days it holds about ${kib(monthOfUse)}, and the store drops it a day
after it ends or expires. Accepted webhooks stay in memory until they are delivered and then
for \`outbox.retentionMs\` (default 7 days), at most the newest 20,000 finished; delivery events
for 7 days while their message is unknown and 90 days once applied, at most the newest 20,000
(\`docs/inbox.md\`, "What a webhook costs"). Inbound mail is data the inbox keeps by design.
For more than a few thousand active users or a busy inbox, use
\`@postern/postgres\`.

Measured ${new Date().toISOString().slice(0, 10)} on ${machine()}; the process's RSS at the end was
${(rss / 2 ** 20).toFixed(0)} MiB. Reproduce with \`node bench/memory.mjs\` (\`--scale 0.1\` for a quick run).
`,
);
console.log(`rss ${(rss / 2 ** 20).toFixed(0)} MiB at the end`);
