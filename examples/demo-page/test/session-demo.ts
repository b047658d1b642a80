/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// (page.evaluate callbacks run in the page: document, localStorage, sessionStorage)
import {
  type Chromium,
  chromiumSkipReason,
  freePort,
  hasChromium,
  launchChromium,
} from '@postern/testkit/browser';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Env } from '../src/index.js';

type StartApp = (env: Env) => Promise<{ close(): Promise<void> }>;

// The demo page's browser session in Debian's Chromium, two tabs of one browser: the refresh
// token is an HttpOnly cookie, so every tab of the origin shares the session, a reload keeps
// it, a sign-out ends it everywhere, and no page script can read a token.

const PASSWORD = 'Lantern-Harbor-Quartz-5172';
const TTL_SECONDS = 3;

/** The scenario for both example apps (they serve the same page). */
export function describeSessionDemo(name: string, startApp: StartApp): void {
  describe.skipIf(!hasChromium)(
    `${name}: demo page sessions in Chromium${chromiumSkipReason}`,
    { timeout: 120_000 },
    () => {
      let app: Awaited<ReturnType<StartApp>>;
      let origin: string;
      let browser: Chromium;

      beforeAll(async () => {
        const port = await freePort();
        origin = `http://localhost:${port}`;
        app = await startApp({
          PORT: String(port),
          HOST: '127.0.0.1',
          ORIGIN: origin,
          WORKERS: '0',
          LOG_LEVEL: 'error',
          ACCESS_TOKEN_TTL_SECONDS: String(TTL_SECONDS),
        });
        browser = await launchChromium();
      });

      afterAll(async () => {
        await browser?.close();
        await app?.close();
      });

      async function tab(): Promise<Page> {
        const page = await browser.newPage();
        await page.goto(`${origin}/`);
        await page.locator('body[data-ready]').waitFor({ state: 'attached' });
        return page;
      }
      const session = (page: Page) => page.evaluate(() => document.body.dataset.session);
      /** What any script of the page could read. */
      const readable = (page: Page) =>
        page.evaluate(() => ({
          cookie: document.cookie,
          local: Object.keys(localStorage),
          session: Object.keys(sessionStorage),
        }));
      /** An authenticated call through the page's own client, as its code makes them (a string:
       *  the test runner would rewrite a function's dynamic import). */
      const call = (page: Page): Promise<number> =>
        page.evaluate(
          'import("/api.js").then(({ client }) => client.fetch("/auth/me")).then((r) => r.status)',
        );

      it('is signed in in a new tab and after a reload, through expiries, and signed out everywhere at once', async () => {
        const errors: string[] = [];
        const a = await tab();
        a.on('pageerror', (e) => errors.push(e.message));
        expect(await session(a)).toBe('signed-out');

        const email = `session-demo-${Date.now()}@example.test`;
        const signup = a.locator('#signup-form');
        await signup.locator('input[name=name]').fill('Session Person');
        await signup.locator('input[name=email]').fill(email);
        await signup.locator('input[name=password]').fill(PASSWORD);
        await signup.locator('button[type=submit]').click();
        await expect
          .poll(() => a.locator('#status').textContent(), { timeout: 30_000 })
          .toContain('Account created');
        const b = await tab();
        expect(await session(b)).toBe('signed-out');

        const login = a.locator('#login-form');
        await login.locator('input[name=email]').fill(email);
        await login.locator('input[name=password]').fill(PASSWORD);
        await login.locator('button[type=submit]').click();
        await a.locator('body[data-session="signed-in"]').waitFor({ state: 'attached', timeout: 30_000 });
        // The tab that was open signs in too, and a new one starts signed in.
        await b.locator('body[data-session="signed-in"]').waitFor({ state: 'attached', timeout: 2000 });
        await expect.poll(() => b.locator('#me').textContent()).toContain(email);
        const c = await tab();
        expect(await session(c)).toBe('signed-in');
        await a.reload();
        await a.locator('body[data-ready]').waitFor({ state: 'attached' });
        expect(await session(a)).toBe('signed-in');

        // Every tab's access token runs out, and all call at once: the session lives.
        for (let round = 0; round < 3; round++) {
          await a.waitForTimeout(TTL_SECONDS * 1000);
          expect(await Promise.all([a, b, c, a, b, c].map(call))).toEqual(Array(6).fill(200));
        }

        for (const p of [a, b, c]) expect(await readable(p)).toEqual({ cookie: '', local: [], session: [] });

        await b.locator('#logout').click();
        const started = Date.now();
        await Promise.all(
          [a, c].map((p) =>
            p.locator('body[data-session="signed-out"]').waitFor({ state: 'attached', timeout: 1000 }),
          ),
        );
        expect(Date.now() - started).toBeLessThan(1000);
        expect(await a.locator('#login-form').isVisible()).toBe(true);
        const d = await tab();
        expect(await session(d)).toBe('signed-out');
        expect(errors).toEqual([]);
        await Promise.all([a, b, c, d].map((p) => p.close()));
      });
    },
  );
}
