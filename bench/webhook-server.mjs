// One server under test for bench/webhook-intake.mjs, in its own process so the load generator
// never shares its event loop. Started as `node bench/webhook-server.mjs <target>`;
// prints `READY <port>` once listening. Postern is loaded from the built packages.
import { isUtf8 } from 'node:buffer';
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { built, ready } from './lib.mjs';

export const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const MiB = 1024 * 1024;

const fromPackage = (pkg, name) =>
  createRequire(new URL(`../packages/${pkg}/package.json`, import.meta.url))(name);

/** The baseline's work: only the Standard Webhooks HMAC check and an in-memory append; no
 *  routing, JSON parsing, dedupe or problem+json. `[status, body]` out, mounted on bare Fastify
 *  and on bare Express. */
function bareIntake() {
  const key = Buffer.from(SECRET.slice(6), 'base64');
  const events = [];
  const refused = [401, { code: 'webhook_signature_invalid' }];
  return (h, body) => {
    const id = h['webhook-id'];
    const ts = h['webhook-timestamp'];
    const sigs = h['webhook-signature'];
    if (
      typeof id !== 'string' ||
      typeof ts !== 'string' ||
      typeof sigs !== 'string' ||
      !/^\d{1,12}$/.test(ts)
    )
      return refused;
    if (Math.abs(Date.now() / 1000 - Number(ts)) > 300) return refused;
    const expected = createHmac('sha256', key).update(`${id}.${ts}.`).update(body).digest();
    const ok = sigs.split(' ').some((entry) => {
      if (!entry.startsWith('v1,')) return false;
      const sig = Buffer.from(entry.slice(3), 'base64');
      return sig.length === 32 && timingSafeEqual(sig, expected);
    });
    if (!ok) return refused;
    events.push({ id, payload: body.toString('utf8') });
    return [202, { accepted: true, outboxEventId: String(events.length) }];
  };
}

/** A reference, not a target: what docs/webhooks.md requires of every signed intake, written
 *  inline with no Postern code, no ports and no promises: the secret setting read per request
 *  (a Map), the full Standard Webhooks rules (both prefixes, id and timestamp checks, up to 10
 *  canonical signatures), strict UTF-8 and a JSON-object body, the four routing rules, a
 *  dedupe `Map`, an outbox-shaped record with a random id, and the same answer headers (the
 *  eight delivery types are core's exported list: data, not code). Its ratio is about the
 *  ceiling of any implementation of these rules through Fastify on the machine (its `Map` is
 *  slower than the outbox's dedupe index at this size; without any dedupe it measured the same
 *  within the noise). */
function requiredIntake(deliveryTypes) {
  const settings = new Map([['inbox.mail.webhook-secret', SECRET]]);
  let lastRaw;
  let keys = [];
  const byKey = new Map();
  const events = [];
  const refused = [401, { code: 'webhook_signature_invalid' }];
  const one = (v) => (Array.isArray(v) ? (v.length === 1 ? v[0] : undefined) : v);
  const inbound = (v) =>
    typeof v === 'string' &&
    ['email.received', 'inbound', 'received'].some((m) => v.toLowerCase().includes(m));
  const delivery = (v) => typeof v === 'string' && deliveryTypes.has(v.toLowerCase().replace(/^email\./, ''));
  const route = (b) => {
    if (inbound(b.type) || inbound(b.event) || inbound(b.name)) return 'inbound';
    if (delivery(b.type) || delivery(b.event)) return 'event';
    const d = b.data;
    if (d && typeof d === 'object' && !Array.isArray(d) && ('from' in d || 'to' in d || 'subject' in d))
      return 'inbound';
    return typeof b.type === 'string' ? 'event' : 'inbound';
  };
  return (h, body) => {
    const raw = settings.get('inbox.mail.webhook-secret');
    if (raw !== lastRaw) {
      lastRaw = raw;
      keys = raw.split(/\s+/).map((s) => Buffer.from(s.slice(6), 'base64'));
    }
    const prefix = ['webhook', 'svix'].find(
      (p) => h[`${p}-signature`] && h[`${p}-id`] && h[`${p}-timestamp`],
    );
    if (prefix === undefined) return refused;
    const id = one(h[`${prefix}-id`]);
    const ts = one(h[`${prefix}-timestamp`]);
    const entries = String(h[`${prefix}-signature`]).split(' ').filter(Boolean);
    if (!id || !/^[\x21-\x7e]{1,256}$/.test(id) || !ts || !/^\d{1,12}$/.test(ts) || entries.length > 10)
      return refused;
    if (Math.abs(Date.now() / 1000 - Number(ts)) > 300) return refused;
    const sigs = [];
    for (const e of entries) {
      if (!e.startsWith('v1,')) continue;
      const sig = Buffer.from(e.slice(3), 'base64');
      if (sig.length === 32 && sig.toString('base64') === e.slice(3)) sigs.push(sig);
    }
    const ok = keys.some((key) => {
      const expected = createHmac('sha256', key).update(`${id}.${ts}.`).update(body).digest();
      return sigs.some((sig) => timingSafeEqual(sig, expected));
    });
    if (!ok) return refused;
    if (!isUtf8(body)) return [400, { code: 'invalid_json' }];
    const text = body.toString('utf8');
    let value;
    try {
      value = JSON.parse(text);
    } catch {
      return [400, { code: 'invalid_json' }];
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      return [400, { code: 'validation_failed' }];
    const name = route(value) === 'event' ? 'inbox.event.received' : 'inbox.inbound.received';
    const dedupeKey = `webhook-id:${id}`;
    let eventId = byKey.get(dedupeKey);
    if (eventId === undefined) {
      eventId = randomUUID();
      byKey.set(dedupeKey, eventId);
      events.push({
        id: eventId,
        name,
        payload: text,
        dedupeKey,
        status: 'pending',
        attempts: 0,
        createdAt: new Date(),
      });
    }
    return [202, { accepted: true, outboxEventId: eventId }];
  };
}

/** Fastify with the raw body as a Buffer, as both bare routes take it. */
function bufferFastify() {
  const Fastify = fromPackage('fastify', 'fastify');
  const app = Fastify({ bodyLimit: 10 * MiB });
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  return app;
}

async function bareFastify() {
  const app = bufferFastify();
  const intake = bareIntake();
  app.post('/inbox/webhook', async (request, reply) => {
    const [status, body] = intake(request.headers, request.body);
    return reply.code(status).send(body);
  });
  return app;
}

/** The reference answers with the headers every Postern answer carries. */
const ANSWER_HEADERS = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };

async function referenceFastify() {
  const { DELIVERY_EVENT_TYPES } = await built('core/webhook');
  const app = bufferFastify();
  const intake = requiredIntake(DELIVERY_EVENT_TYPES);
  app.post('/inbox/webhook', async (request, reply) => {
    const [status, body] = intake(request.headers, request.body);
    return reply.code(status).headers(ANSWER_HEADERS).send(body);
  });
  return app;
}

function bareExpress() {
  const express = fromPackage('express', 'express');
  const app = express();
  const intake = bareIntake();
  app.post('/inbox/webhook', express.raw({ type: '*/*', limit: 10 * MiB }), (req, res) => {
    const [status, body] = intake(req.headers, req.body);
    res.status(status).json(body);
  });
  return app;
}

async function postern() {
  const { createPostern } = await built('core');
  return createPostern({
    issuer: 'https://bench.test',
    audience: 'bench',
    settings: { 'inbox.mail.webhook-secret': SECRET },
  });
}

const targets = {
  'fastify (bare HMAC route)': async () => {
    const app = await bareFastify();
    await app.listen({ port: 0, host: '127.0.0.1' });
    return app.server.address().port;
  },
  'express (bare HMAC route)': () => listen(createServer(bareExpress())),
  'fastify (required work inline)': async () => {
    const app = await referenceFastify();
    await app.listen({ port: 0, host: '127.0.0.1' });
    return app.server.address().port;
  },
  'postern + fastify': async () => {
    const { posternPlugin } = await built('fastify');
    const Fastify = fromPackage('fastify', 'fastify');
    const app = Fastify({ bodyLimit: 10 * MiB });
    await app.register(posternPlugin, { postern: await postern() });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return app.server.address().port;
  },
  'postern + express': async () => {
    const { posternRouter } = await built('express');
    const express = fromPackage('express', 'express');
    const app = express();
    app.use(posternRouter(await postern()));
    return listen(createServer(app));
  },
  'postern + node:http': async () => {
    const ph = await postern();
    return listen(
      createServer(async (req, res) => {
        const out = await ph.handle({
          method: req.method,
          path: req.url,
          headers: req.headers,
          body: req,
          ip: req.socket.remoteAddress,
        });
        if (!out) return res.writeHead(404).end();
        res.writeHead(out.status, out.headers).end(out.body ?? undefined);
      }),
    );
  },
};

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

export const TARGETS = Object.keys(targets);

if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) {
  const target = process.argv[2];
  if (!(target in targets)) {
    console.error(`unknown target ${target}; one of: ${TARGETS.join(', ')}`);
    process.exit(2);
  }
  // The pid lets the load generator read this process's CPU time (/proc) around a run.
  ready(await targets[target](), { pid: process.pid });
}
