import type { NeutralRequest, Postern, PosternOptions } from '@postern/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, expectSafeHeaders } from './expect.js';
import type { HttpContext, HttpEnv } from './harness.js';
import { expectJson, type SignedUp, signUp } from './session.js';

/** The page origin the scenarios trust; https, so the cookie name carries `__Secure-`. */
export const APP_ORIGIN = 'https://app.postern.test';
const COOKIE = '__Secure-postern_refresh';
const DAY = 86_400;

interface SessionBody {
  accessToken: string;
  tokenType: string;
  expiresIn: number;
  refreshToken?: string;
}

/** One `Set-Cookie` line taken apart: its value and attributes (names in lower case). */
export interface SetCookie {
  name: string;
  value: string;
  attrs: Record<string, string | true>;
  raw: string;
}

export function parseSetCookie(raw: string): SetCookie {
  const [pair, ...rest] = raw.split(';');
  const eq = pair!.indexOf('=');
  const attrs: Record<string, string | true> = {};
  for (const a of rest) {
    const i = a.indexOf('=');
    if (i === -1) attrs[a.trim().toLowerCase()] = true;
    else attrs[a.slice(0, i).trim().toLowerCase()] = a.slice(i + 1).trim();
  }
  return { name: pair!.slice(0, eq).trim(), value: pair!.slice(eq + 1).trim(), attrs, raw };
}

/** The one refresh cookie an answer sets (fails when there is none or several). */
export function refreshCookieOf(res: Response, name = COOKIE): SetCookie {
  const set = res.headers.getSetCookie().map(parseSetCookie);
  expect(set.map((c) => c.name)).toEqual([name]);
  return set[0]!;
}

/** What a page of `origin` sends with the cookie: JSON, `Origin`, and the cookie itself. */
export function fromPage(cookie: string, origin: string | null = APP_ORIGIN, name = COOKIE) {
  const headers: Record<string, string> = { cookie: `${name}=${cookie}` };
  if (origin !== null) headers.origin = origin;
  return { json: {}, headers };
}

/** Signs `a` in as a browser session: the access token and the refresh cookie's value. */
export async function cookieLogin(
  ctx: HttpContext,
  a: { email: string; password: string },
  name = COOKIE,
): Promise<{ accessToken: string; cookie: SetCookie }> {
  const res = await ctx.request('/auth/login', {
    json: { email: a.email, password: a.password, refreshToken: 'cookie' },
  });
  const cookie = refreshCookieOf(res, name);
  const body = await expectJson<SessionBody>(res, 200);
  expect(body.refreshToken).toBeUndefined();
  return { accessToken: body.accessToken, cookie };
}

const refresh = (ctx: HttpContext, cookie: string, origin?: string | null) =>
  ctx.request('/auth/refresh', fromPage(cookie, origin));
const me = (ctx: HttpContext, accessToken: string) => ctx.request('/auth/me', { bearer: accessToken });

/** Browser sessions: the refresh token in an HttpOnly cookie, its rotation, the reuse window
 *  for tabs refreshing at once, and the cross-site checks on what the cookie authorizes. */
export function browserScenarios(env: HttpEnv): void {
  describe('browser sessions (refresh token in a cookie)', () => {
    const options: Partial<PosternOptions> = { cookieSessions: { trustedOrigins: [APP_ORIGIN] } };
    let ctx: HttpContext;
    let a: SignedUp;
    beforeAll(async () => {
      ctx = await env.setup(options);
      a = await signUp(ctx);
    });
    afterAll(() => ctx?.close());

    it("login with refreshToken 'cookie' sets an HttpOnly, Secure, SameSite=Strict cookie on the auth path for what is left of the session, and no refreshToken in the JSON", async () => {
      const res = await ctx.request('/auth/login', {
        json: { email: a.email, password: a.password, refreshToken: 'cookie' },
      });
      const c = refreshCookieOf(res);
      const body = await expectJson<SessionBody>(res, 200);
      expect(body).toEqual({ accessToken: expect.any(String), tokenType: 'Bearer', expiresIn: 900 });
      expectSafeHeaders(res);
      expect(c.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
      // The idle end (7 days by default) comes before the absolute one (30 days).
      expect(c.attrs).toEqual({
        'max-age': String(7 * DAY),
        path: '/auth',
        httponly: true,
        secure: true,
        samesite: 'Strict',
      });
      await expectJson(await me(ctx, body.accessToken), 200);
    });

    it('refresh with {} and the cookie rotates it: a new cookie, a working access token, no refreshToken in the JSON', async () => {
      const s = await cookieLogin(ctx, a);
      const res = await refresh(ctx, s.cookie.value);
      const next = refreshCookieOf(res);
      const body = await expectJson<SessionBody>(res, 200);
      expect(body.refreshToken).toBeUndefined();
      expect(next.value).not.toBe(s.cookie.value);
      expect(next.attrs).toMatchObject({ path: '/auth', httponly: true, secure: true, samesite: 'Strict' });
      await expectJson(await me(ctx, body.accessToken), 200);
      await expectJson(await refresh(ctx, next.value), 200);
    });

    it('a login without refreshToken answers an access token alone, no cookie, beside cookie sessions', async () => {
      const res = await ctx.request('/auth/login', { json: { email: a.email, password: a.password } });
      expect(res.headers.getSetCookie()).toEqual([]);
      expect(await expectJson<SessionBody>(res, 200)).toEqual({
        accessToken: expect.any(String),
        tokenType: 'Bearer',
        expiresIn: 900,
      });
    });

    it('a token in the body keeps working as before beside cookie sessions', async () => {
      const login = await expectJson<SessionBody>(
        await ctx.request('/auth/login', {
          json: { email: a.email, password: a.password, refreshToken: true },
        }),
        200,
      );
      expect(login.refreshToken).toBeDefined();
      const res = await ctx.request('/auth/refresh', { json: { refreshToken: login.refreshToken } });
      expect(res.headers.getSetCookie()).toEqual([]);
      const next = await expectJson<SessionBody>(res, 200);
      expect(next.refreshToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(await ctx.request('/auth/logout', { json: { refreshToken: next.refreshToken } })).toMatchObject({
        status: 204,
      });
    });

    it('the just-rotated cookie again within the reuse window gets 200 and the same newest cookie; after it, the family ends', async () => {
      const s = await cookieLogin(ctx, a);
      const first = await refresh(ctx, s.cookie.value);
      const newest = refreshCookieOf(first);
      await expectJson(first, 200);
      ctx.clock.advance(9_000);
      const repeat = await refresh(ctx, s.cookie.value);
      expect(refreshCookieOf(repeat).value).toBe(newest.value);
      const body = await expectJson<SessionBody>(repeat, 200);
      await expectJson(await me(ctx, body.accessToken), 200);
      ctx.clock.advance(2_000);
      await expectProblem(await refresh(ctx, s.cookie.value), 401, 'invalid_token');
      await expectProblem(await me(ctx, body.accessToken), 401, 'invalid_token');
      await expectProblem(await refresh(ctx, newest.value), 401, 'invalid_token');
    });

    it('parallel refreshes with one cookie all get 200 and one newest cookie, and the session lives on', async () => {
      const s = await cookieLogin(ctx, a);
      const answers = await Promise.all(Array.from({ length: 10 }, () => refresh(ctx, s.cookie.value)));
      const cookies = answers.map((r) => refreshCookieOf(r).value);
      const bodies = await Promise.all(answers.map((r) => expectJson<SessionBody>(r, 200)));
      expect(new Set(cookies).size).toBe(1);
      for (const b of bodies) await expectJson(await me(ctx, b.accessToken), 200);
      const next = await refresh(ctx, cookies[0]!);
      await expectJson(next, 200);
      await expectJson(await refresh(ctx, refreshCookieOf(next).value), 200);
    });

    it('refuses the cookie from an untrusted origin, without Origin or Sec-Fetch-Site, or as a non-JSON request: 403 csrf_refused, nothing rotated or ended', async () => {
      const s = await cookieLogin(ctx, a);
      const refused = [
        fromPage(s.cookie.value, 'https://evil.test'),
        fromPage(s.cookie.value, 'https://app.postern.test.evil.test'),
        fromPage(s.cookie.value, 'http://app.postern.test'),
        fromPage(s.cookie.value, 'null'),
        fromPage(s.cookie.value, null),
        {
          ...fromPage(s.cookie.value, null),
          headers: { ...fromPage(s.cookie.value, null).headers, 'sec-fetch-site': 'same-site' },
        },
        {
          ...fromPage(s.cookie.value, null),
          headers: { ...fromPage(s.cookie.value, null).headers, 'sec-fetch-site': 'cross-site' },
        },
      ];
      for (const path of ['/auth/refresh', '/auth/logout'])
        for (const init of refused) {
          const res = await ctx.request(path, init);
          expect(res.headers.getSetCookie()).toEqual([]);
          await expectProblem(res, 403, 'csrf_refused');
        }
      // A form or a text body (what a cross-site page can send without asking) is refused too.
      for (const path of ['/auth/refresh', '/auth/logout'])
        for (const [type, body] of [
          ['text/plain', '{}'],
          ['application/x-www-form-urlencoded', 'a=b'],
          ['multipart/form-data; boundary=x', '--x--'],
        ] as const) {
          const res = await ctx.request(path, {
            method: 'POST',
            headers: { cookie: `${COOKIE}=${s.cookie.value}`, origin: APP_ORIGIN, 'content-type': type },
            body,
          });
          await expectProblem(res, 403, 'csrf_refused');
        }
      const noType = await ctx.request('/auth/refresh', {
        method: 'POST',
        headers: { cookie: `${COOKIE}=${s.cookie.value}`, origin: APP_ORIGIN },
      });
      await expectProblem(noType, 403, 'csrf_refused');
      // The session and its cookie are as they were: the first rotation is still the original one.
      await expectJson(await me(ctx, s.accessToken), 200);
      await expectJson(await refresh(ctx, s.cookie.value), 200);
    });

    it('accepts a same-origin request without Origin when Sec-Fetch-Site says same-origin', async () => {
      const s = await cookieLogin(ctx, a);
      const init = fromPage(s.cookie.value, null);
      const res = await ctx.request('/auth/refresh', {
        ...init,
        headers: { ...init.headers, 'sec-fetch-site': 'same-origin' },
      });
      await expectJson(res, 200);
    });

    it('logout with {} and the cookie ends the session and clears the cookie', async () => {
      const s = await cookieLogin(ctx, a);
      const res = await ctx.request('/auth/logout', fromPage(s.cookie.value));
      expect(res.status).toBe(204);
      const cleared = refreshCookieOf(res);
      expect(cleared.value).toBe('');
      expect(cleared.attrs).toMatchObject({ 'max-age': '0', path: '/auth', httponly: true, secure: true });
      await expectProblem(await me(ctx, s.accessToken), 401, 'invalid_token');
      await expectProblem(await refresh(ctx, s.cookie.value), 401, 'invalid_token');
    });

    it('refresh and logout with {} and no cookie answer 401 invalid_token', async () => {
      for (const path of ['/auth/refresh', '/auth/logout'])
        await expectProblem(
          await ctx.request(path, { json: {}, headers: { origin: APP_ORIGIN } }),
          401,
          'invalid_token',
        );
    });

    it('a refresh cookie with an unknown token is 401 and clears the dead cookie', async () => {
      const res = await refresh(ctx, 'A'.repeat(43));
      const cleared = refreshCookieOf(res);
      expect(cleared.value).toBe('');
      expect(cleared.attrs['max-age']).toBe('0');
      await expectProblem(res, 401, 'invalid_token');
    });

    it("Max-Age is what is left of the session's absolute life", async () => {
      const short = await env.setup({ ...options, refreshTokenTtlSeconds: 3600, refreshIdleSeconds: 3600 });
      try {
        const b = await signUp(short);
        const s = await cookieLogin(short, b);
        expect(s.cookie.attrs['max-age']).toBe('3600');
        short.clock.advance(600_000);
        const res = await refresh(short, s.cookie.value);
        expect(refreshCookieOf(res).attrs['max-age']).toBe('3000');
      } finally {
        await short.close();
      }
    });
  });

  describe('browser sessions: configuration', () => {
    it("answers 400 validation_failed to refreshToken 'cookie' when cookie sessions are off", async () => {
      const ctx = await env.setup();
      try {
        const a = await signUp(ctx);
        const res = await ctx.request('/auth/login', {
          json: { email: a.email, password: a.password, refreshToken: 'cookie' },
        });
        expect(res.headers.getSetCookie()).toEqual([]);
        const p = await expectProblem(res, 400, 'validation_failed');
        expect(p.errors?.[0]?.path).toBe('refreshToken');
      } finally {
        await ctx.close();
      }
    });

    it('takes a name, SameSite=Lax and a Domain; an http origin (development) gets no __Secure- prefix', async () => {
      const origin = 'http://localhost:5173';
      const ctx = await env.setup({
        cookieSessions: { trustedOrigins: [origin], name: 'sid_rt', sameSite: 'Lax', domain: 'postern.test' },
      });
      try {
        const a = await signUp(ctx);
        const s = await cookieLogin(ctx, a, 'sid_rt');
        expect(s.cookie.attrs).toMatchObject({
          samesite: 'Lax',
          domain: 'postern.test',
          secure: true,
          httponly: true,
        });
        const res = await ctx.request('/auth/refresh', fromPage(s.cookie.value, origin, 'sid_rt'));
        expect(refreshCookieOf(res, 'sid_rt').value).not.toBe(s.cookie.value);
        await expectJson(res, 200);
      } finally {
        await ctx.close();
      }
    });

    it('with reuseWindowSeconds 0 a repeat of the rotated cookie ends the family at once', async () => {
      const ctx = await env.setup({
        cookieSessions: { trustedOrigins: [APP_ORIGIN], reuseWindowSeconds: 0 },
      });
      try {
        const a = await signUp(ctx);
        const s = await cookieLogin(ctx, a);
        const first = await refresh(ctx, s.cookie.value);
        const newest = refreshCookieOf(first).value;
        await expectJson(first, 200);
        await expectProblem(await refresh(ctx, s.cookie.value), 401, 'invalid_token');
        await expectProblem(await refresh(ctx, newest), 401, 'invalid_token');
      } finally {
        await ctx.close();
      }
    });
  });
}

/** Wraps `ph.handle` so every answer also sets a host cookie: an adapter must then send two
 *  `Set-Cookie` lines, not one joined or one lost. */
export function withHostCookie<P extends Pick<Postern, 'handle'>>(ph: P): P {
  return {
    ...ph,
    handle: async (req: NeutralRequest) => {
      const out = await ph.handle(req);
      if (out) out.headers['set-cookie'] = [...[out.headers['set-cookie'] ?? []].flat(), 'host=1; Path=/'];
      return out;
    },
  };
}

/** Through an adapter mounted under `prefix` at `url` (a Postern with cookie sessions for
 *  `APP_ORIGIN`, wrapped by `withHostCookie`): the cookie's path carries the prefix, both
 *  cookies of an answer arrive, and the request's `Cookie` header reaches the core. */
export async function expectCookieSessionThroughAdapter(url: string, prefix: string): Promise<void> {
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${url}${prefix}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const email = `adapter-${crypto.randomUUID()}@example.test`;
  const password = 'Tangerine-Orbit-Velvet-4821';
  expect((await post('/auth/signup', { name: 'Adapter', email, password })).status).toBe(201);
  const login = await post('/auth/login', { email, password, refreshToken: 'cookie' });
  expect(login.status).toBe(200);
  const [rt, host] = login.headers.getSetCookie().map(parseSetCookie);
  expect(rt).toMatchObject({ name: COOKIE, attrs: { path: `${prefix}/auth` } });
  expect(host).toMatchObject({ name: 'host', value: '1' });
  const refreshed = await post(
    '/auth/refresh',
    {},
    { cookie: `${COOKIE}=${rt!.value}; host=1`, origin: APP_ORIGIN },
  );
  expect(refreshed.status).toBe(200);
  expect(refreshed.headers.getSetCookie().map((c) => parseSetCookie(c).name)).toEqual([COOKIE, 'host']);
}
