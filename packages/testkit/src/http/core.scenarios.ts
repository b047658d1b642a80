import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { junkRequest } from './arbitraries.js';
import { expectProblem, expectSafeHeaders } from './expect.js';
import type { HttpContext, HttpEnv } from './harness.js';
import { HOST_AUTH_ROUTE, HOST_FRESH_ROUTE, HOST_ROUTE } from './serve.js';
import { freshEmail, signUpAndLogIn } from './session.js';

const KiB = 1024;
/** Generated requests per route; raise it (POSTERN_PROPERTY_RUNS=500) for a deeper search. */
const RUNS = Number(process.env.POSTERN_PROPERTY_RUNS ?? 25);

/** The JSON route the body-handling scenarios aim at (any JSON route would do). */
const JSON_ROUTE = '/auth/login';

/** Signs up and logs in over HTTP. */
async function accessToken(ctx: HttpContext): Promise<string> {
  return (await signUpAndLogIn(ctx, { email: freshEmail('fuzz'), name: 'Fuzz' })).accessToken;
}

function chunked(total: number, chunk = 16 * KiB): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= total) return controller.close();
      const n = Math.min(chunk, total - sent);
      sent += n;
      controller.enqueue(new Uint8Array(n).fill(0x20));
    },
  });
}

/** Scenarios of the neutral HTTP layer every adapter must pass (problem answers, bodies, limits). */
export function coreScenarios(env: HttpEnv): void {
  describe('neutral HTTP layer', () => {
    let ctx: HttpContext;
    beforeAll(async () => {
      ctx = await env.setup();
    });
    afterAll(() => ctx?.close());

    it('answers an unknown route under each mount point with a 404 problem', async () => {
      for (const prefix of ctx.ph.prefixes) {
        const res = await ctx.request(`${prefix}/no-such-route-${randomUUID()}`);
        await expectProblem(res, 404, 'not_found');
      }
    });

    it('answers a known path with the wrong method with a 404 problem', async () => {
      const res = await ctx.request('/auth/openapi.json', { method: 'DELETE' });
      await expectProblem(res, 404, 'not_found');
    });

    it('answers HEAD on a GET route as the GET without content (RFC 9110 9.3.2)', async () => {
      const get = await ctx.request('/auth/openapi.json');
      const head = await ctx.request('/auth/openapi.json', { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
      expect(head.headers.get('content-length')).toBe(String((await get.arrayBuffer()).byteLength));
      expect((await head.arrayBuffer()).byteLength).toBe(0);
      expectSafeHeaders(head);
      // Refused as the GET is: a Bearer route's challenge, no content.
      const me = await ctx.request('/auth/me', { method: 'HEAD' });
      expect(me.status).toBe(401);
      expect(me.headers.get('www-authenticate')).toBe('Bearer');
      expect(me.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect((await me.arrayBuffer()).byteLength).toBe(0);
      // A route with no GET is still unknown.
      expect((await ctx.request('/auth/login', { method: 'HEAD' })).status).toBe(404);
    });

    it('leaves paths outside its mount points to the host', async () => {
      const host = await ctx.request(HOST_ROUTE.path);
      expect(host.status).toBe(200);
      expect(await host.text()).toBe(HOST_ROUTE.body);
      const missing = await ctx.request('/authentic/not-postern');
      expect(missing.status).toBe(404);
      expect(missing.headers.get('content-type') ?? '').not.toMatch(/problem\+json/);
    });

    it("guards the host's own routes with the adapter's requireAuth: the same 401 problem, ended sessions refused", async () => {
      const login = await signUpAndLogIn(ctx, {
        email: freshEmail('host'),
        name: 'Host',
        refreshToken: true,
      });
      for (const headers of [
        {},
        { authorization: 'Basic abc' },
        { authorization: 'Bearer not.a.token' },
      ] as Array<Record<string, string>>) {
        const refused = await ctx.request(HOST_AUTH_ROUTE.path, { headers });
        await expectProblem(refused, 401, 'invalid_token');
        expect(refused.headers.get('www-authenticate')).toBe(
          headers.authorization ? 'Bearer error="invalid_token"' : 'Bearer',
        );
      }
      const ok = await ctx.request(HOST_AUTH_ROUTE.path, { bearer: login.accessToken });
      expect(ok.status).toBe(200);
      const me = (await (await ctx.request('/auth/me', { bearer: login.accessToken })).json()) as {
        user: { id: string };
      };
      expect(await ok.json()).toEqual({ userId: me.user.id });
      expect((await ctx.request('/auth/logout', { json: { refreshToken: login.refreshToken } })).status).toBe(
        204,
      );
      await expectProblem(
        await ctx.request(HOST_AUTH_ROUTE.path, { bearer: login.accessToken }),
        401,
        'invalid_token',
      );
    });

    it("answers what ph.auth throws in the host's own routes as problem+json, through the adapter's error handler", async () => {
      const login = await signUpAndLogIn(ctx, { email: freshEmail('fresh'), name: 'Fresh' });
      const fresh = (password: string) =>
        ctx.request(HOST_FRESH_ROUTE.path, { json: { password }, bearer: login.accessToken });
      expect(await (await fresh(login.password)).json()).toEqual({ fresh: true });
      const wrong = await fresh('not-the-password');
      await expectProblem(wrong, 403, 'reauth_required');
      expectSafeHeaders(wrong);
      // Wrong passwords count as failed logins: past the limit, a 429 that says how long to wait.
      let last = wrong;
      for (let i = 0; i < 12 && last.status !== 429; i++) last = await fresh('not-the-password');
      await expectProblem(last, 429, 'rate_limited');
      expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0);
    });

    it('sends nosniff and no-store on successes and errors alike', async () => {
      const ok = await ctx.request('/auth/openapi.json');
      expect(ok.status).toBe(200);
      expectSafeHeaders(ok);
      const missing = await ctx.request('/auth/nope');
      expectSafeHeaders(missing);
      expect(missing.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
    });

    it('serves an OpenAPI 3.1 document that lists every route of the table', async () => {
      const res = await ctx.request('/auth/openapi.json');
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
      expect(doc.openapi).toBe('3.1.0');
      for (const r of ctx.ph.routes) {
        const path = r.fullPath.replace(/:(\w+)/g, '{$1}');
        expect(doc.paths[path]?.[r.method.toLowerCase()], `${r.method} ${path}`).toBeDefined();
      }
    });

    it('refuses a chunked body over the limit with 413 without reading it all', async () => {
      const res = await ctx.request(JSON_ROUTE, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: chunked(400 * KiB),
        duplex: 'half',
      } as RequestInit);
      await expectProblem(res, 413, 'payload_too_large');
      // The client may still be sending: the server must not keep reading on this connection.
      expect(res.headers.get('connection')).toBe('close');
    });

    it('refuses a declared Content-Length over the limit with 413', async () => {
      const body = JSON.stringify({ email: 'a@example.test', password: 'x'.repeat(101 * KiB) });
      const res = await ctx.request(JSON_ROUTE, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      await expectProblem(res, 413, 'payload_too_large');
      expect(res.headers.get('connection')).toBe('close');
    });

    it('reads a body just under the limit and validates it', async () => {
      const res = await ctx.request(JSON_ROUTE, {
        json: { junk: 'x'.repeat(90 * KiB) },
      });
      await expectProblem(res, 400, 'validation_failed');
    });

    it('refuses a body that is not JSON with 415', async () => {
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'not a media type']) {
        const res = await ctx.request(JSON_ROUTE, {
          method: 'POST',
          headers: { 'content-type': type },
          body: 'email=a@example.test',
        });
        await expectProblem(res, 415, 'unsupported_media_type');
      }
    });

    it('refuses a compressed JSON body with 415, and takes an identity one', async () => {
      const body = JSON.stringify({ email: 'a@example.test' });
      const gz = await ctx.request('/auth/forgot', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
        body: gzipSync(body),
      });
      await expectProblem(gz, 415, 'unsupported_media_type');
      const plain = await ctx.request('/auth/forgot', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': 'identity' },
        body,
      });
      expect(plain.status).toBe(202);
    });

    it('refuses malformed JSON with 400 invalid_json', async () => {
      const res = await ctx.request(JSON_ROUTE, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"email": "a@example.test",',
      });
      await expectProblem(res, 400, 'invalid_json');
    });

    it('refuses unknown fields with 400 validation_failed listing each error', async () => {
      const res = await ctx.request(JSON_ROUTE, { json: { isAdmin: true } });
      const problem = await expectProblem(res, 400, 'validation_failed');
      expect(problem.errors?.length).toBeGreaterThan(0);
      for (const e of problem.errors ?? [])
        expect(e).toEqual({ path: expect.any(String), message: expect.any(String) });
    });
  });

  describe('route switches', () => {
    it('answers a switched-off signup route with 404 not_found', async () => {
      const ctx = await env.setup({ routes: { signup: false } });
      try {
        const res = await ctx.request('/auth/signup', {
          json: { name: 'N', email: 'n@example.test', password: 'Tangerine-Orbit-Velvet-4821' },
        });
        await expectProblem(res, 404, 'not_found');
        expect(ctx.ph.routes.some((r) => r.fullPath === '/auth/signup')).toBe(false);
      } finally {
        await ctx.close();
      }
    });
  });

  describe('throttling over HTTP', () => {
    let ctx: HttpContext;
    beforeAll(async () => {
      ctx = await env.setup();
    });
    afterAll(() => ctx?.close());

    it('answers 429 rate_limited with a Retry-After once failed logins pass the limit', async () => {
      const json = { email: `throttled-${randomUUID()}@example.test`, password: 'wrong-password-1' };
      let res = await ctx.request('/auth/login', { json });
      for (let i = 0; i < 30 && res.status !== 429; i++) {
        await expectProblem(res, 401, 'invalid_credentials');
        res = await ctx.request('/auth/login', { json });
      }
      const retryAfter = Number(res.headers.get('retry-after'));
      await expectProblem(res, 429, 'rate_limited');
      expect(Number.isInteger(retryAfter) && retryAfter > 0).toBe(true);
    });

    it('keys address limits by the forwarded client behind a trusted proxy range, by the socket otherwise', async () => {
      const throttle = { 'login:ip': { points: 2, durationSeconds: 900 } };
      // A fresh email per try: only the address bucket fills.
      const fail = (c: HttpContext, xff: string) =>
        c.request('/auth/login', {
          json: { email: `xff-${randomUUID()}@example.test`, password: 'wrong-password-1' },
          headers: { 'x-forwarded-for': xff },
        });
      const behind = await env.setup({ trustedProxies: ['127.0.0.0/8', '::1/128'], throttle });
      try {
        for (let i = 0; i < 2; i++)
          await expectProblem(await fail(behind, '203.0.113.7'), 401, 'invalid_credentials');
        await expectProblem(await fail(behind, '203.0.113.7'), 429, 'rate_limited');
        // Another client behind the same proxy has a bucket of its own.
        await expectProblem(await fail(behind, '198.51.100.1, 203.0.113.8'), 401, 'invalid_credentials');
      } finally {
        await behind.close();
      }
      const direct = await env.setup({ throttle });
      try {
        // Without a trusted proxy the header is the client's own say-so: one bucket, the socket's.
        await expectProblem(await fail(direct, '203.0.113.7'), 401, 'invalid_credentials');
        await expectProblem(await fail(direct, '203.0.113.8'), 401, 'invalid_credentials');
        await expectProblem(await fail(direct, '203.0.113.9'), 429, 'rate_limited');
      } finally {
        await direct.close();
      }
    });
  });

  describe('generated input (fast-check)', () => {
    let ctx: HttpContext;
    let token: string;
    beforeAll(async () => {
      ctx = await env.setup();
      token = await accessToken(ctx);
    });
    afterAll(() => ctx?.close());

    it('never answers 5xx to generated bodies, content types and headers on any route', {
      timeout: 600_000,
    }, async () => {
      expect(ctx.ph.routes.length).toBeGreaterThan(0);
      for (const route of ctx.ph.routes) {
        const property = fc.asyncProperty(junkRequest(route, token), async (junk) => {
          const res = await ctx.request(junk.path, {
            method: route.method,
            headers: junk.headers,
            body: route.method === 'GET' ? undefined : (junk.body as RequestInit['body']),
          });
          const text = await res.text();
          const seen = `${res.status} ${text.slice(0, 200)}`;
          expect(res.status, seen).toBeGreaterThanOrEqual(200);
          expect(res.status, seen).toBeLessThan(500);
          expectSafeHeaders(res);
          if (res.status >= 300) {
            expect(res.headers.get('content-type'), seen).toMatch(/^application\/problem\+json/);
            const problem = JSON.parse(text) as { status: number; code: string };
            expect(problem.status, seen).toBe(res.status);
            expect(problem.code, seen).toMatch(/^[a-z_]+$/);
          }
        });
        try {
          await fc.assert(property, { numRuns: RUNS });
        } catch (e) {
          throw new Error(`${route.method} ${route.fullPath}: ${(e as Error).message}`);
        }
      }
    });
  });
}
