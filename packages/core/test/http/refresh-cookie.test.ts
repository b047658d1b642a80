import { ConfigError, createPostern, type PosternOptions, silentLogger } from '@postern/core';
import { recordingLogger } from '@postern/testkit';
import { describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/handle.js';
import { markCookieSession, readCookie, resolveCookieSessions } from '../../src/http/refresh-cookie.js';
import { mountRoutes } from '../../src/http/route-table.js';
import { Router } from '../../src/http/router.js';

const PASSWORD = 'Tangerine-Orbit-Velvet-4821';
const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

describe('cookie session options', () => {
  it('defaults: Strict, a 10 s reuse window, and the __Secure- prefix when every trusted origin is https', () => {
    expect(resolveCookieSessions({ trustedOrigins: ['https://app.example'] })).toEqual({
      name: '__Secure-postern_refresh',
      sameSite: 'Strict',
      domain: undefined,
      reuseWindowSeconds: 10,
      trustedOrigins: new Set(['https://app.example']),
    });
    expect(resolveCookieSessions(undefined)).toBeNull();
    // Development on http: a browser would refuse a __Secure- cookie set over plain http.
    expect(
      resolveCookieSessions({ trustedOrigins: ['https://app.example', 'http://localhost:5173'] })?.name,
    ).toBe('postern_refresh');
    expect(resolveCookieSessions({ trustedOrigins: ['https://a.example'], name: '__Secure-rt' })?.name).toBe(
      '__Secure-rt',
    );
  });

  it('compares origins as browsers send them: lower case, default port left out', () => {
    const c = resolveCookieSessions({
      trustedOrigins: ['HTTPS://App.Example:443/', 'http://localhost:3000'],
    });
    expect([...c!.trustedOrigins]).toEqual(['https://app.example', 'http://localhost:3000']);
  });

  it.each([
    [{ trustedOrigins: [] }],
    [{ trustedOrigins: ['app.example'] }],
    [{ trustedOrigins: ['https://app.example/path'] }],
    [{ trustedOrigins: ['https://user@app.example'] }],
    [{ trustedOrigins: ['ftp://app.example'] }],
    [{ trustedOrigins: ['https://app.example'], name: 'bad name;' }],
    [{ trustedOrigins: ['https://app.example'], sameSite: 'None' }],
    [{ trustedOrigins: ['https://app.example'], domain: 'evil.example; Path=/' }],
    [{ trustedOrigins: ['https://app.example'], reuseWindowSeconds: -1 }],
    [{ trustedOrigins: ['https://app.example'], reuseWindowSeconds: 1.5 }],
    [{ trustedOrigins: ['https://app.example'], reuseWindowSeconds: 61 }],
    // A browser refuses a __Secure- cookie set over plain http: the name could never work.
    [{ trustedOrigins: ['https://app.example', 'http://localhost:5173'], name: '__Secure-rt' }],
  ])('refuses %j with a ConfigError', (o) => {
    expect(() => resolveCookieSessions(o as never)).toThrow(ConfigError);
  });

  it('accepts a reuse window of up to 60 s', () => {
    expect(
      resolveCookieSessions({ trustedOrigins: ['https://app.example'], reuseWindowSeconds: 60 })
        ?.reuseWindowSeconds,
    ).toBe(60);
  });

  it('warns at start when a plain-http trusted origin leaves the cookie without the __Secure- prefix', () => {
    const start = (trustedOrigins: string[]) => {
      const { logger, warnings } = recordingLogger();
      createPostern({
        issuer: 'https://app.example',
        audience: 'app',
        logger,
        cookieSessions: { trustedOrigins },
      });
      return warnings().filter((w) => w.reason === 'cookie_prefix_dropped');
    };
    expect(start(['https://app.example', 'http://staging.app.example'])).toEqual([
      expect.objectContaining({
        event: 'config_warning',
        name: 'postern_refresh',
        origin: 'http://staging.app.example',
      }),
    ]);
    expect(start(['https://app.example'])).toEqual([]);
    // Development on this machine: no sibling host can plant a cookie there.
    expect(start(['http://localhost:5173', 'http://127.0.0.1:3000', 'http://[::1]:8080'])).toEqual([]);
  });

  it('createPostern refuses unknown cookieSessions keys', () => {
    expect(() =>
      createPostern({
        issuer: 'https://app.example',
        audience: 'app',
        logger: silentLogger,
        cookieSessions: { trustedOrigins: ['https://app.example'], sameSites: 'Lax' } as never,
      }),
    ).toThrow(/cookieSessions\.sameSites/);
  });
});

describe('readCookie', () => {
  it('finds the named cookie among others, in one header or several, quoted or not', () => {
    expect(readCookie('a=1; rt=abc; b=2', 'rt')).toBe('abc');
    expect(readCookie(['a=1', 'rt="q-v"'], 'rt')).toBe('q-v');
    expect(readCookie('xrt=1; rt_=2', 'rt')).toBeUndefined();
    expect(readCookie('rt=', 'rt')).toBeUndefined();
    expect(readCookie(undefined, 'rt')).toBeUndefined();
    // Several of one name (another path): the first, which the browser sends for the longest path.
    expect(readCookie('rt=first; rt=second', 'rt')).toBe('first');
  });
});

describe('the refresh cookie path', () => {
  async function loginCookie(options: Partial<PosternOptions>, base?: string, path = '/auth/login') {
    const ph = createPostern({
      issuer: 'https://app.example',
      audience: 'app',
      logger: silentLogger,
      cookieSessions: { trustedOrigins: ['https://app.example'] },
      ...options,
    });
    try {
      const headers = { 'content-type': 'application/json' };
      const signup = path.replace(/login$/, 'signup');
      await ph.handle({
        method: 'POST',
        path: signup,
        headers,
        body: json({ name: 'Ada', email: 'ada@example.test', password: PASSWORD }),
        base,
      });
      const res = await ph.handle({
        method: 'POST',
        path,
        headers,
        body: json({ email: 'ada@example.test', password: PASSWORD, refreshToken: 'cookie' }),
        base,
      });
      expect(res?.status).toBe(200);
      return [res!.headers['set-cookie']].flat()[0]!;
    } finally {
      await ph.close();
    }
  }

  it('is the auth mount point under the host prefix', async () => {
    expect(await loginCookie({}, '/api')).toMatch(/; Path=\/api\/auth;/);
    expect(await loginCookie({}, '/api/')).toMatch(/; Path=\/api\/auth;/);
    expect(await loginCookie({ basePath: { auth: '/identity' } }, '', '/identity/login')).toMatch(
      /; Path=\/identity;/,
    );
    expect(await loginCookie({ basePath: { auth: '/' } }, '', '/login')).toMatch(/; Path=\/;/);
  });
});

describe('a refused cross-site request', () => {
  it('is logged as csrf_refused with the reason and the standard fields, never the cookie', async () => {
    const { lines, logger } = recordingLogger();
    const ph = createPostern({
      issuer: 'https://app.example',
      audience: 'app',
      logger,
      cookieSessions: { trustedOrigins: ['https://app.example'] },
    });
    try {
      const refresh = (headers: Record<string, string>) =>
        ph.handle({
          method: 'POST',
          path: '/auth/refresh',
          headers: { cookie: '__Secure-postern_refresh=secret-cookie-value', ...headers },
          body: json({}),
          ip: '192.0.2.9',
        });
      const json1 = { 'content-type': 'application/json' };
      expect((await refresh({ ...json1, origin: 'https://evil.example' }))?.status).toBe(403);
      expect((await refresh(json1))?.status).toBe(403);
      expect((await refresh({ 'content-type': 'text/plain', origin: 'https://app.example' }))?.status).toBe(
        403,
      );
      const refused = lines.filter((l) => l.fields.event === 'csrf_refused');
      expect(refused.map((l) => [l.level, l.fields.reason])).toEqual([
        ['warn', 'untrusted_origin'],
        ['warn', 'no_origin'],
        ['warn', 'not_json'],
      ]);
      expect(refused[0]!.fields).toMatchObject({
        outcome: 'failure',
        ip: '192.0.2.9',
        route: '/auth/refresh',
      });
      expect(JSON.stringify(lines)).not.toContain('secret-cookie-value');
    } finally {
      await ph.close();
    }
  });
});

describe('a refresh refused for its token', () => {
  it('clears the dead cookie in the 401; a refusal without the cookie sets none', async () => {
    const ph = createPostern({
      issuer: 'https://app.example',
      audience: 'app',
      logger: silentLogger,
      cookieSessions: { trustedOrigins: ['https://app.example'] },
    });
    try {
      const refresh = (headers: Record<string, string>, body: unknown = {}) =>
        ph.handle({
          method: 'POST',
          path: '/auth/refresh',
          headers: { 'content-type': 'application/json', origin: 'https://app.example', ...headers },
          body: json(body),
        });
      const dead = await refresh({ cookie: '__Secure-postern_refresh=not-a-live-token' });
      expect(dead?.status).toBe(401);
      expect([dead!.headers['set-cookie']].flat()).toEqual([
        expect.stringMatching(/^__Secure-postern_refresh=; Max-Age=0;/),
      ]);
      const inBody = await refresh({}, { refreshToken: 'not-a-live-token' });
      expect(inBody?.status).toBe(401);
      expect(inBody!.headers['set-cookie']).toBeUndefined();
    } finally {
      await ph.close();
    }
  });
});

describe('the refresh cookie on answers', () => {
  it('is only looked for on routes that set, rotate or clear it', async () => {
    const router = new Router();
    // An answer marked as a cookie session's, from a route that is not a cookie route.
    const [route] = mountRoutes(
      [
        {
          area: 'auth',
          library: null,
          routes: [
            {
              method: 'GET',
              path: '/plain',
              operationId: 'plain',
              auth: 'none',
              summary: 'plain',
              handler: async () => ({ status: 200, body: markCookieSession({ refreshToken: 't' }, 60) }),
            },
          ],
        },
      ],
      { auth: '/auth', inbox: '/inbox', webhook: '/inbox/webhook' },
    );
    router.add(route!);
    const handle = createHandler({
      router,
      logger: silentLogger,
      bodyLimit: () => 1024,
      authenticate: async () => {
        throw new Error('no bearer routes here');
      },
      clientIp: () => '192.0.2.1',
      owns: () => true,
      cookieSessions: {
        config: resolveCookieSessions({ trustedOrigins: ['https://app.example'] })!,
        authBase: '/auth',
      },
    });
    const res = await handle({ method: 'GET', path: '/auth/plain', headers: {} });
    expect(res?.status).toBe(200);
    expect(res!.headers['set-cookie']).toBeUndefined();
  });
});
