// The client in real Chromium: two tabs of one browser context against an Express host with
// cookie sessions, a 3-second access token and the strict reuse rule (no server-side window),
// so what keeps parallel tabs signed in is the client's own cross-tab serialisation.
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPostern, type Postern, silentLogger } from '@postern/core';
import { posternErrorHandler, posternRouter, principalOf, requireAuth } from '@postern/express';
import {
  addVirtualAuthenticator,
  type Chromium,
  chromiumSkipReason,
  hasChromium,
  launchChromium,
} from '@postern/testkit/browser';
import { build } from 'esbuild';
import express from 'express';
import * as OTPAuth from 'otpauth';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

const PASSWORD = 'Tangerine-Orbit-Velvet-4821';
const TTL_SECONDS = 3;

declare global {
  interface Window {
    client: import('../src/index.js').PosternClient;
  }
}

/** The client bundled as a page gets it: index.js plus the passkey chunk it imports on use. */
async function clientFiles(): Promise<Map<string, string>> {
  const out = await build({
    entryPoints: { index: new URL('../src/index.ts', import.meta.url).pathname },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    outdir: '/client',
    write: false,
    logLevel: 'silent',
  });
  return new Map(out.outputFiles.map((f) => [f.path, f.text]));
}

const PAGE = `<!doctype html><meta charset="utf-8"><title>client</title>
<script type="module">
  import { createClient } from '/client/index.js';
  window.client = createClient();
  window.client.ready().then(() => { document.body.dataset.ready = 'true'; });
</script><body></body>`;

describe.skipIf(!hasChromium)(
  `@postern/client in Chromium${chromiumSkipReason}`,
  { timeout: 120_000 },
  () => {
    let ph: Postern;
    let server: Server;
    let origin: string;
    /** The same server under another host name: another origin, another site. */
    let foreign: string;
    let browser: Chromium;
    /** Every answer to a refresh or logout: which origin asked, what it got. */
    const answers: Array<{ path: string; origin: string | undefined; status: number }> = [];

    beforeAll(async () => {
      const files = await clientFiles();
      const app = express();
      server = await new Promise<Server>((resolve) => {
        const s = app.listen(0, '127.0.0.1', () => resolve(s));
      });
      const port = (server.address() as AddressInfo).port;
      origin = `http://localhost:${port}`;
      foreign = `http://127.0.0.1:${port}`;
      ph = createPostern({
        issuer: origin,
        audience: 'client-test',
        logger: silentLogger,
        accessTokenTtlSeconds: TTL_SECONDS,
        cookieSessions: { trustedOrigins: [origin], reuseWindowSeconds: 0 },
        webauthn: { rpId: 'localhost', rpName: 'Client test', origin },
        mfa: { encryptionKey: randomBytes(32) },
      });
      app.use((req, res, next) => {
        if (/^\/auth\/(refresh|logout)$/.test(req.path))
          res.on('finish', () =>
            answers.push({ path: req.path, origin: req.headers.origin, status: res.statusCode }),
          );
        next();
      });
      app.use(posternRouter(ph));
      app.get('/host/me', requireAuth(ph), (_req, res) => {
        res.json({ userId: principalOf(res).userId });
      });
      app.get('/', (_req, res) => {
        res.type('html').send(PAGE);
      });
      app.get('/client/:file', (req, res) => {
        const js = files.get(`/client/${req.params.file}`);
        if (js === undefined) res.sendStatus(404);
        else res.type('text/javascript').send(js);
      });
      app.use(posternErrorHandler());
      browser = await launchChromium();
    });

    afterAll(async () => {
      await browser?.close();
      await new Promise((resolve) => server?.close(resolve));
      await ph?.close();
    });

    beforeEach(async () => {
      await browser.context.clearCookies();
      answers.length = 0;
    });

    async function tab(at = origin): Promise<Page> {
      const page = await browser.newPage();
      await page.goto(`${at}/`);
      await page.locator('body[data-ready]').waitFor({ state: 'attached' });
      return page;
    }
    const status = (page: Page) => page.evaluate(() => window.client.getSession().status);
    const hostCall = (page: Page) =>
      page.evaluate(() => window.client.fetch('/host/me').then((r) => r.status));
    const refreshes = () => answers.filter((a) => a.path === '/auth/refresh').length;

    async function signUpAndLogIn(page: Page, tag: string) {
      const email = `${tag}-${Date.now()}@example.test`;
      const result = await page.evaluate(
        async ({ email, password }) => {
          await window.client.signUp({ name: 'Tab Person', email, password });
          return window.client.logIn({ email, password });
        },
        { email, password: PASSWORD },
      );
      expect(result.status).toBe('signed-in');
      return email;
    }

    it('signs every tab in, keeps both signed in through parallel expiries, and nothing is readable', async () => {
      const a = await tab();
      const b = await tab();
      expect(await status(b)).toBe('signed-out');
      const fresh = answers.length; // before: the tabs' silent refreshes without a cookie (401)
      await signUpAndLogIn(a, 'tabs');
      // The sign-in reaches the other tab, which takes a token of its own with the cookie.
      await b.waitForFunction(() => window.client.getSession().status === 'signed-in', null, {
        timeout: 2000,
      });

      for (let round = 0; round < 4; round++) {
        await a.waitForTimeout(TTL_SECONDS * 1000);
        // Both tabs' tokens have run out: each calls the host API three times at once.
        const calls = await Promise.all(
          [a, b].map((p) =>
            p.evaluate(() =>
              Promise.all([1, 2, 3].map(() => window.client.fetch('/host/me').then((r) => r.status))),
            ),
          ),
        );
        expect(calls.flat()).toEqual([200, 200, 200, 200, 200, 200]);
      }
      // Every refresh since the login rotated a live cookie: none was taken for reuse.
      const since = answers.slice(fresh).map((x) => x.status);
      expect(since.length).toBeGreaterThanOrEqual(9); // b's first token, then one per tab and round
      expect(since).toEqual(Array(since.length).fill(200));
      expect(await status(a)).toBe('signed-in');
      expect(await status(b)).toBe('signed-in');

      // A new tab and a reload are signed in (the cookie), and no script can read a token.
      const c = await tab();
      expect(await status(c)).toBe('signed-in');
      await a.reload();
      await a.locator('body[data-ready]').waitFor({ state: 'attached' });
      expect(await status(a)).toBe('signed-in');
      for (const p of [a, b, c]) {
        expect(
          await p.evaluate(() => ({
            cookie: document.cookie,
            local: localStorage.length,
            session: sessionStorage.length,
          })),
        ).toEqual({ cookie: '', local: 0, session: 0 });
      }
      await Promise.all([a.close(), b.close(), c.close()]);
    });

    it('logs in under the cross-tab lock of refreshes: no login is sent while another tab holds it', async () => {
      const page = await tab();
      const email = `lock-${Date.now()}@example.test`;
      await page.evaluate(
        ({ email, password }) => window.client.signUp({ name: 'Lock Person', email, password }),
        { email, password: PASSWORD },
      );
      // Another tab's refresh, as the lock sees it: held until the test lets it go.
      const holder = await tab();
      const name = `postern:${origin}/auth`;
      await holder.evaluate((name) => {
        void navigator.locks.request(
          name,
          () => new Promise<void>((release) => Object.assign(window, { release })),
        );
      }, name);
      const first = await page.evaluate(
        ({ email, password, name }) => {
          const login = window.client.logIn({ email, password });
          Object.assign(window, { login });
          const waiting = async () => {
            for (;;) {
              const { pending = [] } = await navigator.locks.query();
              if (pending.some((l) => l.name === name)) return 'waits for the lock';
              await new Promise((r) => setTimeout(r, 10));
            }
          };
          return Promise.race([login.then(() => 'logged in without the lock'), waiting()]);
        },
        { email, password: PASSWORD, name },
      );
      expect(first).toBe('waits for the lock');
      await holder.evaluate(() => (window as unknown as { release: () => void }).release());
      expect(
        await page.evaluate(() => (window as unknown as { login: Promise<{ status: string }> }).login),
      ).toMatchObject({ status: 'signed-in' });
      await Promise.all([page.close(), holder.close()]);
    });

    it('makes one refresh for ten parallel calls with an expired token', async () => {
      const page = await tab();
      await signUpAndLogIn(page, 'ten');
      await page.waitForTimeout(TTL_SECONDS * 1000);
      const before = refreshes();
      const statuses = await page.evaluate(() =>
        Promise.all(Array.from({ length: 10 }, () => window.client.fetch('/host/me').then((r) => r.status))),
      );
      expect(statuses).toEqual(Array(10).fill(200));
      expect(refreshes() - before).toBe(1);
      await page.close();
    });

    it('signs the other tab out within a second of a sign-out', async () => {
      const a = await tab();
      await signUpAndLogIn(a, 'out');
      const b = await tab();
      expect(await status(b)).toBe('signed-in');
      await a.evaluate(() => window.client.logOut());
      const started = Date.now();
      await b.waitForFunction(() => window.client.getSession().status === 'signed-out', null, {
        timeout: 1000,
      });
      expect(Date.now() - started).toBeLessThan(1000);
      expect(await hostCall(b)).toBe(401);
      await Promise.all([a.close(), b.close()]);
    });

    it('refuses a page of another origin: it can neither refresh nor log out with the cookie', async () => {
      const own = await tab();
      await signUpAndLogIn(own, 'csrf');
      const evil = await tab(foreign);
      const target = origin;
      const tried = await evil.evaluate(async (target) => {
        const attempts: Array<[string, RequestInit]> = [];
        for (const path of ['/auth/refresh', '/auth/logout']) {
          // JSON needs a preflight the server does not grant; text/plain goes out without one.
          attempts.push([path, { headers: { 'content-type': 'application/json' }, body: '{}' }]);
          attempts.push([path, { headers: { 'content-type': 'text/plain' }, body: '{}', mode: 'no-cors' }]);
        }
        const out: string[] = [];
        for (const [path, init] of attempts) {
          try {
            const res = await fetch(target + path, { method: 'POST', credentials: 'include', ...init });
            out.push(`${path} ${res.type} ${res.status}`);
          } catch {
            out.push(`${path} blocked`);
          }
        }
        return out;
      }, target);
      expect(tried).toHaveLength(4);
      const fromEvil = answers.filter((a) => a.origin === foreign);
      expect(fromEvil.length).toBeGreaterThan(0); // the no-cors requests did reach the server...
      expect(fromEvil.every((a) => a.status !== 200 && a.status !== 204)).toBe(true); // ...and were refused
      // The session lives: the own tab still refreshes and calls the host API.
      await own.waitForTimeout(TTL_SECONDS * 1000);
      expect(await hostCall(own)).toBe(200);
      expect(await status(own)).toBe('signed-in');
      await Promise.all([own.close(), evil.close()]);
    });

    it('completes an MFA login with TOTP through the client', async () => {
      const page = await tab();
      const email = await signUpAndLogIn(page, 'totp');
      const { secret } = await page.evaluate(() => window.client.mfa.totpSetup());
      const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) });
      await page.evaluate((code) => window.client.mfa.totpConfirm({ code }), totp.generate());
      await page.evaluate(() => window.client.logOut());
      const pending = await page.evaluate(({ email, password }) => window.client.logIn({ email, password }), {
        email,
        password: PASSWORD,
      });
      expect(pending).toMatchObject({ status: 'mfa-required', methods: expect.arrayContaining(['totp']) });
      // The code of the next step: the current one was spent on the confirmation.
      const next = totp.generate({ timestamp: Date.now() + 30_000 });
      const done = await page.evaluate((code) => window.client.verify({ method: 'totp', code }), next);
      expect(done).toMatchObject({ status: 'signed-in', user: { email } });
      expect(await hostCall(page)).toBe(200);
      await page.close();
    });

    it('registers a passkey and completes an MFA login with it (CDP virtual authenticator)', async () => {
      const page = await tab();
      await addVirtualAuthenticator(page);
      const email = await signUpAndLogIn(page, 'passkey');
      const added = await page.evaluate(() => window.client.passkey.register({ name: 'Test key' }));
      expect(added.recoveryCodes).toHaveLength(10);
      expect(await page.evaluate(() => window.client.getSession().user?.mfa.methods)).toEqual(['webauthn']);
      await page.evaluate(() => window.client.logOut());
      const pending = await page.evaluate(({ email, password }) => window.client.logIn({ email, password }), {
        email,
        password: PASSWORD,
      });
      expect(pending).toMatchObject({
        status: 'mfa-required',
        methods: expect.arrayContaining(['webauthn']),
      });
      const done = await page.evaluate(() => window.client.passkey.logIn());
      expect(done).toMatchObject({ status: 'signed-in', user: { email } });
      expect(await hostCall(page)).toBe(200);
      await page.close();
    });
  },
);
