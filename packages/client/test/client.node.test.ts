// The client from Node against both adapters over real HTTP: the refresh token held by the
// client (memory or the caller's storage), the server's clock moved to expire access tokens.

import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpEnv, type HttpContext, type Mount } from '@postern/testkit';
import * as OTPAuth from 'otpauth';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expressHost } from '../../express/test/host.js';
import { fastifyHost } from '../../fastify/test/host.js';
import { createClient, PosternClientError, type TokenStorage } from '../src/index.js';

const SCENARIO_PASSWORD = 'Tangerine-Orbit-Velvet-4821';
const hosts: Record<string, Mount> = { express: expressHost, fastify: fastifyHost };

const totp = (secret: string, ctx: HttpContext) =>
  new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate({
    timestamp: ctx.clock.now().getTime(),
  });

/** Token storage a Node script might keep: one variable, shared by the clients given it. */
function memoryStorage(): { stored: { token: string | null }; storage: TokenStorage } {
  const stored: { token: string | null } = { token: null };
  const storage: TokenStorage = {
    get: () => stored.token,
    set: (t) => {
      stored.token = t;
    },
    delete: () => {
      stored.token = null;
    },
  };
  return { stored, storage };
}

describe.each(Object.entries(hosts))('@postern/client on %s', (name, mount) => {
  let ctx: HttpContext;
  let refreshes = 0;
  /** fetch that counts the refreshes the client makes. */
  const counted: typeof fetch = (input, init) => {
    if (String(input).endsWith('/auth/refresh')) refreshes++;
    return fetch(input, init);
  };
  const newClient = (storage?: TokenStorage) => createClient({ baseUrl: ctx.url, fetch: counted, storage });
  let email: string;

  beforeEach(async () => {
    ctx = await createHttpEnv(name, mount).setup();
    refreshes = 0;
    email = `client-${Math.random().toString(36).slice(2)}@example.test`;
  });
  afterEach(() => ctx.close());

  async function signedIn() {
    const client = newClient();
    await client.signUp({ name: 'Client Tester', email, password: SCENARIO_PASSWORD });
    expect(await client.logIn({ email, password: SCENARIO_PASSWORD })).toMatchObject({
      status: 'signed-in',
      user: { email },
    });
    return client;
  }

  it('signs up, logs in, tells subscribers and calls the host API with the token', async () => {
    const client = newClient();
    expect(client.getSession()).toEqual({ status: 'signed-out', user: null });
    const seen: string[] = [];
    client.subscribe(() => seen.push(client.getSession().status));
    const { user } = await client.signUp({ name: 'Client Tester', email, password: SCENARIO_PASSWORD });
    const result = await client.logIn({ email, password: SCENARIO_PASSWORD });
    expect(result).toEqual({ status: 'signed-in', user: expect.objectContaining({ id: user.id, email }) });
    expect(seen).toEqual(['signed-in']);
    const snapshot = client.getSession();
    expect(client.getSession()).toBe(snapshot); // stable for useSyncExternalStore
    expect((await client.me()).id).toBe(user.id);
    expect(client.getSession()).toBe(snapshot); // unchanged user, same object
    const host = await client.fetch('/host/me');
    expect(await host.json()).toEqual({ userId: user.id });
  });

  it('adds the token only to requests for its own origin, and never refreshes on a 401 of another origin', async () => {
    const client = await signedIn();
    const seen: Array<string | undefined> = [];
    const other = createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(401, { 'content-type': 'application/problem+json' });
      res.end(JSON.stringify({ status: 401, code: 'invalid_token' }));
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      // localhost and 127.0.0.1 are different origins for the same server.
      const port = (other.address() as AddressInfo).port;
      expect((await client.fetch(`http://localhost:${port}/x`)).status).toBe(401);
      expect((await client.fetch(new Request(`http://127.0.0.1:${port}/y`))).status).toBe(401);
      expect(seen).toEqual([undefined, undefined]);
      expect(refreshes).toBe(0);
      expect((await client.fetch('/host/me')).status).toBe(200);
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it('keeps the session when the logout does not reach the server, and signs out once it does', async () => {
    let down = true;
    const flaky: typeof fetch = (input, init) =>
      down && String(input).endsWith('/auth/logout')
        ? Promise.reject(new TypeError('fetch failed'))
        : fetch(input, init);
    const client = createClient({ baseUrl: ctx.url, fetch: flaky });
    await client.signUp({ name: 'Client Tester', email, password: SCENARIO_PASSWORD });
    await client.logIn({ email, password: SCENARIO_PASSWORD });
    await expect(client.logOut()).rejects.toThrow('fetch failed');
    expect(client.getSession().status).toBe('signed-in');
    expect((await client.fetch('/host/me')).status).toBe(200);
    down = false;
    await client.logOut();
    expect(client.getSession().status).toBe('signed-out');
  });

  it('refreshes once for ten parallel calls with a refused token, and retries each', async () => {
    const client = await signedIn();
    ctx.clock.advance(16 * 60_000); // the server's clock: the access token has expired there
    const answers = await Promise.all(Array.from({ length: 10 }, () => client.fetch('/host/me')));
    expect(answers.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(refreshes).toBe(1);
    expect(client.getSession().status).toBe('signed-in');
    // Postern's own routes go through the same path.
    ctx.clock.advance(16 * 60_000);
    expect((await client.account.sessions()).length).toBe(1);
    expect(refreshes).toBe(2);
  });

  it('hands back a 401 that is not about the token without refreshing', async () => {
    const client = newClient();
    const res = await client.fetch('/host/me');
    expect(res.status).toBe(401);
    expect(refreshes).toBe(0);
  });

  it('signs out when the refresh is refused, and logOut ends the session on the server', async () => {
    const { stored, storage } = memoryStorage();
    const client = newClient(storage);
    await client.ready();
    await client.signUp({ name: 'Client Tester', email, password: SCENARIO_PASSWORD });
    await client.logIn({ email, password: SCENARIO_PASSWORD });
    expect(stored.token).toMatch(/^[A-Za-z0-9_-]{43}$/);

    // Another process with the same storage restores the session silently.
    const again = newClient(storage);
    expect(again.getSession().status).toBe('loading');
    expect(await again.ready()).toMatchObject({ status: 'signed-in', user: { email } });

    const held = stored.token;
    await again.logOut();
    expect(stored.token).toBeNull();
    expect(again.getSession().status).toBe('signed-out');
    const refused = await fetch(`${ctx.url}/auth/refresh`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refreshToken: held }),
    });
    expect(refused.status).toBe(401);
    // The first client's access token dies with the session: its next call cannot refresh.
    const res = await client.fetch('/host/me');
    expect(res.status).toBe(401);
    expect(client.getSession().status).toBe('signed-out');
  });

  it('restores nothing while the refresh cannot be answered (network, 503, 429): it stays unknown and tries again; only a 401 signs out', async () => {
    const { stored, storage } = memoryStorage();
    const first = newClient(storage);
    await first.ready();
    await first.signUp({ name: 'Client Tester', email, password: SCENARIO_PASSWORD });
    await first.logIn({ email, password: SCENARIO_PASSWORD });
    const problem = (status: number, headers: Record<string, string> = {}) =>
      new Response(JSON.stringify({ status, code: status === 429 ? 'rate_limited' : 'unavailable' }), {
        status,
        headers: { 'content-type': 'application/problem+json', ...headers },
      });
    // The first refreshes fail as a server under load or a lost connection would.
    const failures: Array<() => Promise<Response>> = [
      () => Promise.reject(new TypeError('fetch failed')),
      async () => problem(503),
      async () => problem(429, { 'retry-after': '1' }),
    ];
    const flaky: typeof fetch = (input, init) => {
      if (String(input).endsWith('/auth/refresh')) {
        refreshes++;
        const fail = failures.shift();
        if (fail) return fail();
      }
      return fetch(input, init);
    };
    const again = createClient({ baseUrl: ctx.url, fetch: flaky, storage });
    const seen: string[] = [];
    again.subscribe(() => seen.push(again.getSession().status));
    expect(await again.ready()).toMatchObject({ status: 'signed-in', user: { email } });
    expect(seen).toEqual(['signed-in']);
    expect(refreshes).toBe(4);
    expect(stored.token).not.toBeNull();
    again.close();

    // A refresh the server refuses (401) is the one answer that signs out.
    stored.token = 'A'.repeat(43);
    expect(await newClient(storage).ready()).toEqual({ status: 'signed-out', user: null });
    expect(stored.token).toBeNull();
  });

  it("client.fetch answers the host's own 401 when the refresh after it fails, instead of throwing", async () => {
    let down = false;
    const flaky: typeof fetch = (input, init) =>
      down && String(input).endsWith('/auth/refresh')
        ? Promise.reject(new TypeError('fetch failed'))
        : fetch(input, init);
    const client = createClient({ baseUrl: ctx.url, fetch: flaky });
    await client.signUp({ name: 'Client Tester', email, password: SCENARIO_PASSWORD });
    await client.logIn({ email, password: SCENARIO_PASSWORD });
    ctx.clock.advance(16 * 60_000);
    down = true;
    const res = await client.fetch('/host/me');
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: 'invalid_token' });
    // The session may well live: it is kept, and the next call refreshes once the server answers.
    expect(client.getSession().status).toBe('signed-in');
    down = false;
    expect((await client.fetch('/host/me')).status).toBe(200);
  });

  it('completes an MFA login with TOTP and with a recovery code', async () => {
    const client = await signedIn();
    const seed = await client.mfa.totpSetup();
    const { recoveryCodes } = await client.mfa.totpConfirm({ code: totp(seed.secret, ctx) });
    expect(recoveryCodes).toHaveLength(10);
    expect(client.getSession()).toMatchObject({ user: { mfa: { enabled: true, methods: ['totp'] } } });
    await client.logOut();

    expect(await client.logIn({ email, password: SCENARIO_PASSWORD })).toMatchObject({
      status: 'mfa-required',
      methods: expect.arrayContaining(['totp', 'recovery']),
    });
    expect(client.getSession().status).toBe('mfa-required');
    const wrong = await client.verify({ method: 'totp', code: '000000' }).catch((e) => e);
    expect(wrong).toBeInstanceOf(PosternClientError);
    expect(wrong).toMatchObject({ status: 401, code: 'invalid_code' });
    ctx.clock.advance(30_000); // a TOTP code is accepted once: the next step's
    expect(await client.verify({ method: 'totp', code: totp(seed.secret, ctx) })).toMatchObject({
      status: 'signed-in',
    });
    await client.logOut();

    await client.logIn({ email, password: SCENARIO_PASSWORD });
    expect(await client.verify({ method: 'recovery', code: recoveryCodes![0]! })).toMatchObject({
      status: 'signed-in',
    });
    expect((await client.fetch('/host/me')).status).toBe(200);
  });

  it('completes a login that must enrol a first factor, with its recovery codes', async () => {
    await ctx.close();
    ctx = await createHttpEnv(name, mount).setup({ mfa: { required: true, encryptionKey: randomBytes(32) } });
    const client = newClient();
    await client.signUp({ name: 'Client Tester', email, password: SCENARIO_PASSWORD });
    expect(await client.logIn({ email, password: SCENARIO_PASSWORD })).toMatchObject({
      status: 'mfa-required',
      methods: [],
      enrol: expect.arrayContaining(['totp']),
    });
    const seed = await client.enrol.totpSetup();
    const done = await client.enrol.totpConfirm({ code: totp(seed.secret, ctx) });
    expect(done).toMatchObject({ status: 'signed-in', user: { email, mfa: { enabled: true } } });
    expect(done.recoveryCodes).toHaveLength(10);
    expect(client.getSession().status).toBe('signed-in');
    expect((await client.fetch('/host/me')).status).toBe(200);
  });

  it('throws one error class with status, code, retryAfter and field errors', async () => {
    const client = newClient();
    const invalid = await client
      .signUp({ name: 'x', email: 'not-an-email', password: 'short' })
      .catch((e) => e);
    expect(invalid).toBeInstanceOf(PosternClientError);
    expect(invalid.status).toBe(400);
    expect(invalid.code).toBe('validation_failed');
    expect(invalid.errors.map((e: { path: string }) => e.path)).toEqual(expect.arrayContaining(['email']));
    const wrong = await client.logIn({ email, password: SCENARIO_PASSWORD }).catch((e) => e);
    expect(wrong).toMatchObject({ status: 401, code: 'invalid_credentials', retryAfter: undefined });
    let throttled: PosternClientError | undefined;
    for (let i = 0; i < 12 && !throttled; i++) {
      const e = await client.logIn({ email, password: 'Wrong-Password-1234' }).catch((x) => x);
      if (e.code === 'rate_limited') throttled = e;
    }
    expect(throttled).toMatchObject({ status: 429 });
    expect(throttled!.retryAfter).toBeGreaterThan(0);
    const pending = await client.verify({ method: 'totp', code: '123456' }).catch((e) => e);
    expect(pending).toMatchObject({ code: 'no_pending_login' });
    const down = await createClient({ baseUrl: 'http://127.0.0.1:9' })
      .me()
      .catch((e) => e);
    expect(down).toMatchObject({ status: 0, code: 'network_error' });
  });

  it('reads and answers the inbox', async () => {
    const client = await signedIn();
    const account = await client.inbox.createAccount({ address: `support-${email}`, name: 'Support' });
    expect(await client.inbox.accounts()).toEqual([account]);
    const sent = await ctx.ph.inbox.recordOutbound({
      accountId: account.id,
      providerMessageId: 'prov-1',
      to: 'customer@example.test',
      subject: 'Hello',
      text: 'First words',
    });
    const page = await client.inbox.threads(account.id, { limit: 10 });
    expect(page.threads.map((t) => t.id)).toEqual([sent.threadId]);
    const { messages } = await client.inbox.thread(sent.threadId);
    expect(messages.map((m) => m.text)).toEqual(['First words']);
    const missing = await client.inbox.attachment('nope').catch((e) => e);
    expect(missing).toMatchObject({ status: 404 });
    expect(client.inbox.attachmentUrl('a b')).toBe(`${ctx.url}/inbox/attachments/a%20b`);
  });
});
