import type { NeutralRequest } from '@postern/core';
import { createPostern, StoreError } from '@postern/core';
import { memoryStores } from '@postern/core/memory';
import { recordingLogger, TestClock } from '@postern/testkit';
import { expect, it } from 'vitest';

it('answers an unexpected failure with a bare 500 and logs it with the standard fields, user and session included', async () => {
  const clock = new TestClock();
  const stores = memoryStores({ clock });
  stores.sessions.listForUser = async () => {
    throw new Error('boom: internal detail');
  };
  const { lines: logs, logger } = recordingLogger();
  const ph = createPostern({ issuer: 'https://postern.test', audience: 'test', clock, logger, stores });
  const call = (method: string, path: string, body?: unknown, token?: string) => {
    const req: NeutralRequest = {
      method,
      path,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      },
      body: body === undefined ? undefined : Buffer.from(JSON.stringify(body)),
      ip: '192.0.2.1',
    };
    return ph.handle(req);
  };
  const text = (body: string | Uint8Array | null | undefined) =>
    typeof body === 'string' ? body : Buffer.from(body ?? []).toString('utf8');
  const account = { email: 'err@example.test', password: 'Tangerine-Orbit-Velvet-4821' };
  await call('POST', '/auth/signup', { name: 'E', ...account });
  const login = await call('POST', '/auth/login', account);
  const { accessToken } = JSON.parse(text(login!.body)) as { accessToken: string };
  const { userId, sid } = await ph.auth.verifyAccessToken(accessToken);

  const res = await call('GET', '/auth/sessions', undefined, accessToken);
  expect(res!.status).toBe(500);
  expect(JSON.parse(text(res!.body))).toMatchObject({ status: 500, code: 'internal' });
  expect(text(res!.body)).not.toContain('boom');
  expect(logs.filter((l) => l.fields.event === 'internal_error')).toMatchObject([
    {
      level: 'error',
      fields: expect.objectContaining({
        event: 'internal_error',
        outcome: 'failure',
        userId,
        sid,
        ip: '192.0.2.1',
        route: '/auth/sessions',
        requestId: expect.any(String),
      }),
    },
  ]);
});

it('logs a 429 once, with its bucket and the request fields', async () => {
  const { lines: logs, logger } = recordingLogger();
  const ph = createPostern({
    issuer: 'https://postern.test',
    audience: 'test',
    logger,
    throttle: { 'login:email': { points: 1, durationSeconds: 900 } },
  });
  const login = () =>
    ph.handle({
      method: 'POST',
      path: '/auth/login',
      headers: { 'content-type': 'application/json' },
      body: Buffer.from(JSON.stringify({ email: 'limited@example.test', password: 'wrong-password-1' })),
      ip: '192.0.2.9',
    });
  expect((await login())!.status).toBe(401);
  expect((await login())!.status).toBe(429);
  expect(logs.filter((l) => l.fields.event === 'rate_limited')).toMatchObject([
    {
      level: 'warn',
      fields: expect.objectContaining({
        outcome: 'failure',
        reason: 'login:email',
        userId: null,
        ip: '192.0.2.9',
        route: '/auth/login',
        requestId: expect.any(String),
      }),
    },
  ]);
});

it("authorize (the adapters' requireAuth) logs a refusal with the request fields, as the routes do", async () => {
  const { lines: logs, logger } = recordingLogger();
  const ph = createPostern({ issuer: 'https://postern.test', audience: 'test', logger });
  const account = { email: 'guard@example.test', password: 'Tangerine-Orbit-Velvet-4821' };
  await ph.auth.signup({ name: 'G', ...account });
  const s = await ph.auth.login({ ...account, refreshToken: true });
  if (!('accessToken' in s)) throw new Error('no session');
  const headers = { authorization: `Bearer ${s.accessToken}` };
  const ok = await ph.authorize({ headers, ip: '192.0.2.4', path: '/host/me?x=1' });
  expect(ok.principal?.sid).toEqual(expect.any(String));
  await ph.auth.logout({ refreshToken: s.refreshToken! });
  const refused = await ph.authorize({ headers, ip: '192.0.2.4', path: '/host/me?x=1' });
  expect(refused.response).toMatchObject({ status: 401 });
  expect(logs.filter((l) => l.fields.event === 'authorization_denied')).toMatchObject([
    {
      level: 'warn',
      fields: expect.objectContaining({
        reason: 'session_ended',
        ip: '192.0.2.4',
        route: '/host/me',
        requestId: expect.any(String),
      }),
    },
  ]);
  expect((await ph.authorize({ headers: {}, path: '/host/me' })).response).toMatchObject({ status: 401 });
  await ph.close();
});

it('logs a store outage as store_unavailable with the cause underneath, no stack, and answers 503', async () => {
  const clock = new TestClock();
  const stores = memoryStores({ clock });
  stores.users.findByEmail = async () => {
    throw new StoreError('database unavailable', { cause: new Error('connect ECONNREFUSED 127.0.0.1:5432') });
  };
  const { lines: logs, logger } = recordingLogger();
  const ph = createPostern({ issuer: 'https://postern.test', audience: 'test', clock, logger, stores });
  const res = await ph.handle({
    method: 'POST',
    path: '/auth/login',
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify({ email: 'down@example.test', password: 'wrong-password-1' })),
    ip: '192.0.2.3',
  });
  expect(res!.status).toBe(503);
  expect(logs.filter((l) => l.fields.event === 'internal_error')).toEqual([]);
  expect(logs.filter((l) => l.fields.event === 'store_unavailable')).toMatchObject([
    {
      level: 'warn',
      fields: expect.objectContaining({
        outcome: 'failure',
        route: '/auth/login',
        ip: '192.0.2.3',
        err: 'database unavailable',
        cause: 'connect ECONNREFUSED 127.0.0.1:5432',
      }),
    },
  ]);
  expect(JSON.stringify(logs)).not.toMatch(/\n\s+at /);
});
