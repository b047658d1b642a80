// One server under test for bench/webhook-intake.mjs, in its own process so the load generator
// never shares its event loop. Started as `node bench/webhook-server.mjs <target>`;
// prints `READY <port>` once listening. Gatehouse is loaded from the built packages.
import { createHmac, timingSafeEqual } from 'node:crypto';
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

async function bareFastify() {
  const Fastify = fromPackage('fastify', 'fastify');
  const app = Fastify({ bodyLimit: 10 * MiB });
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  const intake = bareIntake();
  app.post('/inbox/webhook', async (request, reply) => {
    const [status, body] = intake(request.headers, request.body);
    return reply.code(status).send(body);
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

async function gatehouse() {
  const { createGatehouse } = await built('core');
  return createGatehouse({
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
  'gatehouse + fastify': async () => {
    const { gatehousePlugin } = await built('fastify');
    const Fastify = fromPackage('fastify', 'fastify');
    const app = Fastify({ bodyLimit: 10 * MiB });
    await app.register(gatehousePlugin, { gatehouse: await gatehouse() });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return app.server.address().port;
  },
  'gatehouse + express': async () => {
    const { gatehouseRouter } = await built('express');
    const express = fromPackage('express', 'express');
    const app = express();
    app.use(gatehouseRouter(await gatehouse()));
    return listen(createServer(app));
  },
  'gatehouse + node:http': async () => {
    const gh = await gatehouse();
    return listen(
      createServer(async (req, res) => {
        const out = await gh.handle({
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
