import { randomUUID } from 'node:crypto';
import type { Postern } from '@postern/core';
import { rawExchange } from '@postern/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY, type Env } from '../src/index.js';

type StartApp = (env: Env) => Promise<{ url: string; ph: Postern; close(): Promise<void> }>;

/** An example app on a free loopback port, no workers, quiet: what app tests start from. */
export const TEST_ENV: Env = {
  PORT: '0',
  HOST: '127.0.0.1',
  ORIGIN: 'http://localhost:3000',
  WORKERS: '0',
  LOG_LEVEL: 'error',
};

/** Same scenarios for both example apps: same behaviour, same env vars. */
export function describeExampleApp(name: string, startApp: StartApp): void {
  const env = TEST_ENV;

  describe(name, () => {
    let app: Awaited<ReturnType<StartApp>>;
    beforeAll(async () => {
      app = await startApp(env);
    });
    afterAll(() => app?.close());

    it('serves the demo page at / under a strict CSP', async () => {
      const res = await fetch(`${app.url}/`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
      const html = await res.text();
      for (const id of ['auth', 'mfa-challenge', 'account', 'mfa', 'inbox'])
        expect(html).toContain(`id="${id}"`);
      for (const file of ['/app.js', '/api.js', '/mfa.js', '/inbox.js', '/style.css']) {
        const asset = await fetch(app.url + file);
        expect(asset.status, file).toBe(200);
      }
    });

    it('keeps files outside the page folder out of reach', async () => {
      for (const path of ['/../package.json', '/%2e%2e/package.json', '/.hidden.js', '/src/config.ts']) {
        const res = await fetch(app.url + path);
        expect(res.status, path).toBe(404);
      }
    });

    it('answers unknown paths outside Postern with a problem+json 404', async () => {
      // Malformed URLs too: Fastify refuses them before routing, Express routes them.
      for (const path of ['/totally/unknown', '/nope.js', '/%', '/x%ff', '/%c0%ae%c0%ae/']) {
        const res = await fetch(app.url + path, { method: path === '/nope.js' ? 'GET' : 'POST' });
        expect(res.status, path).toBe(404);
        expect(res.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
        expect(((await res.json()) as { code: string }).code).toBe('not_found');
      }
    });

    it('answers what Node refuses before any framework (huge headers, a broken chunked body) with problem+json', async () => {
      const huge = await rawExchange(
        app.url,
        `GET /auth/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${'a'.repeat(20_000)}\r\n\r\n`,
      );
      expect(huge.status).toBe(431);
      expect(huge.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(JSON.parse(huge.body)).toMatchObject({ status: 431, code: 'headers_too_large' });
      const chunked = await rawExchange(
        app.url,
        'POST /auth/forgot HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n',
      );
      expect(chunked.status).toBe(400);
      expect(chunked.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(JSON.parse(chunked.body)).toMatchObject({ status: 400, code: 'validation_failed' });
    });

    it('answers /auth/openapi.json', async () => {
      const res = await fetch(`${app.url}/auth/openapi.json`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { openapi: string }).openapi).toBe('3.1.0');
    });

    it('serves the JWKS at the origin root too, where other services look for <iss>/.well-known/jwks.json', async () => {
      const root = await fetch(`${app.url}/.well-known/jwks.json`);
      expect(root.status).toBe(200);
      expect(root.headers.get('content-type')).toBe('application/json; charset=utf-8');
      const jwks = (await root.json()) as { keys: Array<Record<string, unknown>> };
      expect(jwks).toEqual(await (await fetch(`${app.url}/auth/.well-known/jwks.json`)).json());
      // No JWT_PRIVATE_KEYS: one ephemeral key of the default algorithm.
      expect(jwks.keys).toEqual([expect.objectContaining({ kty: 'EC', crv: 'P-256', alg: 'ES256' })]);
    });

    it('signs a user up and logs them in over HTTP', async () => {
      const email = `demo-${randomUUID()}@example.test`;
      const password = 'Tangerine-Orbit-Velvet-4821';
      const post = (path: string, body: unknown) =>
        fetch(app.url + path, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const signup = await post('/auth/signup', { name: 'Demo', email, password });
      expect(signup.status).toBe(201);
      const login = await post('/auth/login', { email, password });
      expect(login.status).toBe(200);
      const { accessToken } = (await login.json()) as { accessToken: string };
      const me = await fetch(`${app.url}/auth/me`, { headers: { authorization: `Bearer ${accessToken}` } });
      expect(me.status).toBe(200);
      expect(((await me.json()) as { user: { email: string } }).user.email).toBe(email);
    });
  });

  describe(`${name}: browser sessions for ORIGIN, ACCESS_TOKEN_TTL_SECONDS`, () => {
    it('keeps the refresh token of a cookie login in an HttpOnly cookie that only pages of ORIGIN can use', async () => {
      const app = await startApp({ ...env, ACCESS_TOKEN_TTL_SECONDS: '7' });
      try {
        const email = `cookie-${randomUUID()}@example.test`;
        const password = 'Tangerine-Orbit-Velvet-4821';
        const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
          fetch(app.url + path, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...headers },
            body: JSON.stringify(body),
          });
        expect((await post('/auth/signup', { name: 'Demo', email, password })).status).toBe(201);
        const login = await post('/auth/login', { email, password, refreshToken: 'cookie' });
        const [cookie] = login.headers.getSetCookie();
        // ORIGIN is http://localhost: no __Secure- prefix, which browsers only take over https.
        expect(cookie).toMatch(
          /^postern_refresh=[\w-]{43}; Max-Age=604800; Path=\/auth; HttpOnly; Secure; SameSite=Strict$/,
        );
        expect(await login.json()).toEqual({
          accessToken: expect.any(String),
          tokenType: 'Bearer',
          expiresIn: 7,
        });
        const jar = { cookie: cookie!.split(';')[0]! };
        const refused = await post('/auth/refresh', {}, { ...jar, origin: 'http://localhost:3001' });
        expect(refused.status).toBe(403);
        expect(((await refused.json()) as { code: string }).code).toBe('csrf_refused');
        const refreshed = await post('/auth/refresh', {}, { ...jar, origin: env.ORIGIN! });
        expect(refreshed.status).toBe(200);
        expect(refreshed.headers.getSetCookie()[0]).toMatch(/^postern_refresh=[\w-]{43};/);
      } finally {
        await app.close();
      }
    });
  });

  describe(`${name} with SIGNUP=off`, () => {
    it('answers the signup route with 404', async () => {
      const app = await startApp({ ...env, SIGNUP: 'off' });
      try {
        const res = await fetch(`${app.url}/auth/signup`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            name: 'N',
            email: 'n@example.test',
            password: 'Tangerine-Orbit-Velvet-4821',
          }),
        });
        expect(res.status).toBe(404);
        expect(((await res.json()) as { code: string }).code).toBe('not_found');
      } finally {
        await app.close();
      }
    });
  });
}
