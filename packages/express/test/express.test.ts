import { createGatehouse, type Gatehouse } from '@gatehouse/core';
import { BODY_CONSUMED_MESSAGE, gatehouseRouter } from '@gatehouse/express';
import { expectProblem, listen, type MountedServer } from '@gatehouse/testkit';
import express, { type ErrorRequestHandler } from 'express';
import { afterEach, describe, expect, it } from 'vitest';

let gh: Gatehouse;
let server: MountedServer;

async function start(build: (app: express.Express) => void) {
  gh = createGatehouse({ issuer: 'https://gatehouse.test', audience: 'test' });
  const app = express();
  build(app);
  server = await listen(app);
}

afterEach(async () => {
  await server?.close();
  await gh?.close();
});

const jsonPost = (body: unknown) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

describe('gatehouseRouter', () => {
  it('serves Gatehouse under the sub-path it is mounted at', async () => {
    await start((app) => app.use('/api', gatehouseRouter(gh)));
    const doc = await fetch(`${server.url}/api/auth/openapi.json`);
    expect(doc.status).toBe(200);
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
      app.use(gatehouseRouter(gh));
      app.post('/host/echo', (req, res) => {
        res.json(req.body);
      });
      app.use(report);
    });
    const res = await fetch(`${server.url}/auth/login`, jsonPost({ email: 'a@example.test' }));
    expect(res.status).toBe(500);
    expect(errors.map((e) => e.message)).toEqual([BODY_CONSUMED_MESSAGE]);
    expect(BODY_CONSUMED_MESSAGE).toMatch(/before any body parser/);
    expect(BODY_CONSUMED_MESSAGE).toContain('app.use(gatehouseRouter(gh)); app.use(express.json());');

    // The host's own JSON routes keep working; bodiless Gatehouse routes too.
    const echo = await fetch(`${server.url}/host/echo`, jsonPost({ a: 1 }));
    expect(await echo.json()).toEqual({ a: 1 });
    expect((await fetch(`${server.url}/auth/openapi.json`)).status).toBe(200);
    expect(errors).toHaveLength(1);
  });

  it('leaves the body to host parsers mounted after it', async () => {
    await start((app) => {
      app.use(gatehouseRouter(gh));
      app.use(express.json());
      app.post('/host/echo', (req, res) => {
        res.json(req.body);
      });
    });
    const echo = await fetch(`${server.url}/host/echo`, jsonPost({ b: [1, 2] }));
    expect(await echo.json()).toEqual({ b: [1, 2] });
  });
});
