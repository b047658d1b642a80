import { createPostern, type Postern, PosternError, StoreError } from '@postern/core';
import { posternErrorHandler, posternFrameworkErrors, posternPlugin } from '@postern/fastify';
import {
  APP_ORIGIN,
  expectCookieSessionThroughAdapter,
  expectProblem,
  withHostCookie,
} from '@postern/testkit';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';

let ph: Postern;
let app: FastifyInstance;
let url: string;

async function start(build: (app: FastifyInstance) => Promise<void>, withFrameworkErrors = false) {
  ph = createPostern({ issuer: 'https://postern.test', audience: 'test' });
  app = Fastify(withFrameworkErrors ? { frameworkErrors: posternFrameworkErrors(ph) } : {});
  await build(app);
  url = await app.listen({ port: 0, host: '127.0.0.1' });
}

afterEach(async () => {
  await app?.close();
  await ph?.close();
});

describe('posternPlugin', () => {
  it("hands the request's Cookie header to the core and writes every Set-Cookie of an answer, under a prefix", async () => {
    ph = createPostern({
      issuer: 'https://postern.test',
      audience: 'test',
      cookieSessions: { trustedOrigins: [APP_ORIGIN] },
    });
    app = Fastify();
    await app.register(posternPlugin, { postern: withHostCookie(ph), prefix: '/api' });
    url = await app.listen({ port: 0, host: '127.0.0.1' });
    await expectCookieSessionThroughAdapter(url, '/api');
  });

  it('serves Postern under the register prefix and strips it from the path', async () => {
    await start(async (app) => {
      await app.register(posternPlugin, { postern: ph, prefix: '/api' });
    });
    const doc = await fetch(`${url}/api/auth/openapi.json`);
    expect(doc.status).toBe(200);
    // Its paths are relative to the register prefix, which the document names as its server.
    expect(((await doc.json()) as { servers: unknown }).servers).toEqual([{ url: '/api' }]);
    await expectProblem(await fetch(`${url}/api/auth/nope?x=1`), 404, 'not_found');
    const outside = await fetch(`${url}/auth/openapi.json`);
    expect(outside.status).toBe(404);
    expect(outside.headers.get('content-type')).not.toMatch(/problem/);
  });

  it('keeps its raw-body parser inside its scope: host routes still parse JSON', async () => {
    await start(async (app) => {
      await app.register(posternPlugin, { postern: ph });
      app.post('/host/echo', async (req) => req.body);
    });
    const echo = await fetch(`${url}/host/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ a: [1, 'x'] }),
    });
    expect(echo.status).toBe(200);
    expect(await echo.json()).toEqual({ a: [1, 'x'] });
  });

  it('answers a malformed Content-Type with a Postern problem, not a Fastify error body', async () => {
    await start(async (app) => {
      await app.register(posternPlugin, { postern: ph });
    });
    const res = await fetch(`${url}/auth/nope`, {
      method: 'POST',
      headers: { 'content-type': 'not a media type' },
      body: '{}',
    });
    await expectProblem(res, 404, 'not_found');
  });

  it('answers a malformed URL under its prefixes with a problem when the host passes frameworkErrors', async () => {
    await start(async (app) => {
      await app.register(posternPlugin, { postern: ph });
    }, true);
    const bad = await fetch(`${url}/inbox/webhook/%E0%A4%A`, { method: 'POST', body: '{}' });
    await expectProblem(bad, 404, 'not_found');
    // Elsewhere the host keeps Fastify's own answer.
    const elsewhere = await fetch(`${url}/elsewhere/%E0%A4%A`);
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.headers.get('content-type')).not.toMatch(/problem/);
  });

  it('registers routes only under the Postern prefixes', async () => {
    await start(async (app) => {
      await app.register(posternPlugin, { postern: ph });
    });
    for (const p of ph.prefixes) {
      expect(app.hasRoute({ method: 'POST', url: p })).toBe(true);
      expect(app.hasRoute({ method: 'POST', url: `${p}/*` })).toBe(true);
    }
    const other = await fetch(`${url}/elsewhere`);
    expect(other.status).toBe(404);
    expect(other.headers.get('content-type')).not.toMatch(/problem/);
  });

  it("posternErrorHandler answers Postern's errors in host routes as problems, others as Fastify does", async () => {
    const fallen: unknown[] = [];
    await start(async (app) => {
      await app.register(posternPlugin, { postern: ph });
      app.get('/host/limited', async () => {
        throw new PosternError('rate_limited', { retryAfter: 7 });
      });
      app.get('/host/store', async () => {
        throw new StoreError('database unavailable');
      });
      app.get('/host/bug', async () => {
        throw new TypeError('host bug');
      });
      app.get('/host/teapot', async () => {
        throw Object.assign(new Error('short and stout'), { statusCode: 418 });
      });
      app.setErrorHandler(posternErrorHandler());
      app.register(async (scoped) => {
        scoped.setErrorHandler(
          posternErrorHandler((error, _request, reply) => {
            fallen.push(error);
            return reply.code(500).type('text/plain').send('host handler');
          }),
        );
        scoped.get('/host/scoped-bug', async () => {
          throw new TypeError('scoped bug');
        });
      });
    });
    const limited = await fetch(`${url}/host/limited`);
    await expectProblem(limited, 429, 'rate_limited');
    expect(limited.headers.get('retry-after')).toBe('7');
    await expectProblem(await fetch(`${url}/host/store`), 503, 'unavailable');
    // Anything else: Fastify's own error answer, or the host's fallback.
    const bug = await fetch(`${url}/host/bug`);
    expect(bug.status).toBe(500);
    expect(bug.headers.get('content-type')).toMatch(/^application\/json/);
    expect((await fetch(`${url}/host/teapot`)).status).toBe(418);
    const scoped = await fetch(`${url}/host/scoped-bug`);
    expect([scoped.status, await scoped.text()]).toEqual([500, 'host handler']);
    expect(fallen).toEqual([expect.any(TypeError)]);
  });
});
