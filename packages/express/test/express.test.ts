import { createPostern, type Postern, PosternError, StoreError } from '@postern/core';
import { BODY_CONSUMED_MESSAGE, posternErrors, posternRouter } from '@postern/express';
import {
  APP_ORIGIN,
  expectCookieSessionThroughAdapter,
  expectProblem,
  listen,
  type MountedServer,
  withHostCookie,
} from '@postern/testkit';
import express, { type ErrorRequestHandler } from 'express';
import { afterEach, describe, expect, it } from 'vitest';

let ph: Postern;
let server: MountedServer;

async function start(build: (app: express.Express) => void) {
  ph = createPostern({ issuer: 'https://postern.test', audience: 'test' });
  const app = express();
  build(app);
  server = await listen(app);
}

afterEach(async () => {
  await server?.close();
  await ph?.close();
});

const jsonPost = (body: unknown) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

describe('posternRouter', () => {
  it("hands the request's Cookie header to the core and writes every Set-Cookie of an answer, under a sub-path", async () => {
    ph = createPostern({
      issuer: 'https://postern.test',
      audience: 'test',
      cookieSessions: { trustedOrigins: [APP_ORIGIN] },
    });
    const app = express();
    app.use('/api', posternRouter(withHostCookie(ph)));
    server = await listen(app);
    await expectCookieSessionThroughAdapter(server.url, '/api');
  });

  it('serves Postern under the sub-path it is mounted at', async () => {
    await start((app) => app.use('/api', posternRouter(ph)));
    const doc = await fetch(`${server.url}/api/auth/openapi.json`);
    expect(doc.status).toBe(200);
    // Its paths are relative to the mount point, which the document names as its server.
    const { servers, paths } = (await doc.json()) as { servers: unknown; paths: object };
    expect(servers).toEqual([{ url: '/api' }]);
    expect(Object.keys(paths)).toContain('/auth/me');
    await expectProblem(await fetch(`${server.url}/api/auth/nope?x=1`), 404, 'not_found');
    const outside = await fetch(`${server.url}/auth/openapi.json`);
    expect(outside.status).toBe(404);
    expect(outside.headers.get('content-type')).not.toMatch(/problem/);
  });

  it('fails loudly, saying how to mount it, when express.json() consumed the body first', async () => {
    const errors: Error[] = [];
    const report: ErrorRequestHandler = (err, _req, res, _next) => {
      errors.push(err);
      res.status(500).json({ message: err.message });
    };
    await start((app) => {
      app.use(express.json());
      app.use(posternRouter(ph));
      app.post('/host/echo', (req, res) => {
        res.json(req.body);
      });
      app.use(report);
    });
    const res = await fetch(`${server.url}/auth/login`, jsonPost({ email: 'a@example.test' }));
    expect(res.status).toBe(500);
    expect(errors.map((e) => e.message)).toEqual([BODY_CONSUMED_MESSAGE]);
    expect(BODY_CONSUMED_MESSAGE).toMatch(/before any body parser/);
    expect(BODY_CONSUMED_MESSAGE).toContain('app.use(posternRouter(ph)); app.use(express.json());');

    // The host's own JSON routes keep working; bodiless Postern routes too.
    const echo = await fetch(`${server.url}/host/echo`, jsonPost({ a: 1 }));
    expect(await echo.json()).toEqual({ a: 1 });
    expect((await fetch(`${server.url}/auth/openapi.json`)).status).toBe(200);
    expect(errors).toHaveLength(1);
  });

  it('serves a document without servers when mounted at the root', async () => {
    await start((app) => app.use(posternRouter(ph)));
    const doc = await (await fetch(`${server.url}/auth/openapi.json`)).json();
    expect(doc).not.toHaveProperty('servers');
  });

  it('leaves the body to host parsers mounted after it', async () => {
    await start((app) => {
      app.use(posternRouter(ph));
      app.use(express.json());
      app.post('/host/echo', (req, res) => {
        res.json(req.body);
      });
    });
    const echo = await fetch(`${server.url}/host/echo`, jsonPost({ b: [1, 2] }));
    expect(await echo.json()).toEqual({ b: [1, 2] });
  });

  it("posternErrors answers Postern's errors in host routes as problems and passes others on", async () => {
    const passed: unknown[] = [];
    await start((app) => {
      app.use(posternRouter(ph));
      app.get('/host/limited', () => {
        throw new PosternError('rate_limited', { retryAfter: 7 });
      });
      app.get('/host/store', async () => {
        throw new StoreError('database unavailable');
      });
      app.get('/host/bug', () => {
        throw new TypeError('host bug');
      });
      app.use(posternErrors());
      app.use(((err, _req, res, _next) => {
        passed.push(err);
        res.status(500).type('text/plain').send('host handler');
      }) as ErrorRequestHandler);
    });
    const limited = await fetch(`${server.url}/host/limited`);
    await expectProblem(limited, 429, 'rate_limited');
    expect(limited.headers.get('retry-after')).toBe('7');
    const store = await fetch(`${server.url}/host/store`);
    await expectProblem(store, 503, 'unavailable');
    expect(store.headers.get('retry-after')).toBe('1');
    const bug = await fetch(`${server.url}/host/bug`);
    expect([bug.status, await bug.text()]).toEqual([500, 'host handler']);
    expect(passed).toEqual([expect.any(TypeError)]);
  });
});
