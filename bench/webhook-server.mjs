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

/** The baseline: a bare Fastify route doing only the Standard Webhooks HMAC check and an
 *  in-memory append; no routing, JSON parsing, dedupe or problem+json. */
async function bareFastify() {
  const Fastify = fromPackage('fastify', 'fastify');
  const app = Fastify({ bodyLimit: 10 * MiB });
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  const key = Buffer.from(SECRET.slice(6), 'base64');
  const events = [];
  app.post('/inbox/webhook', async (request, reply) => {
    const h = request.headers;
    const id = h['webhook-id'];
    const ts = h['webhook-timestamp'];
    const sigs = h['webhook-signature'];
    if (
      typeof id !== 'string' ||
      typeof ts !== 'string' ||
      typeof sigs !== 'string' ||
      !/^\d{1,12}$/.test(ts)
    ) {
      return reply.code(401).send({ code: 'webhook_signature_invalid' });
    }
    if (Math.abs(Date.now() / 1000 - Number(ts)) > 300)
      return reply.code(401).send({ code: 'webhook_signature_invalid' });
    const expected = createHmac('sha256', key).update(`${id}.${ts}.`).update(request.body).digest();
    const ok = sigs.split(' ').some((entry) => {
      if (!entry.startsWith('v1,')) return false;
      const sig = Buffer.from(entry.slice(3), 'base64');
      return sig.length === 32 && timingSafeEqual(sig, expected);
    });
    if (!ok) return reply.code(401).send({ code: 'webhook_signature_invalid' });
    events.push({ id, payload: request.body.toString('utf8') });
    return reply.code(202).send({ accepted: true, outboxEventId: String(events.length) });
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
