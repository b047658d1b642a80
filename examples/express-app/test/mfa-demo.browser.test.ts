import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MailCatcher } from '@gatehouse/testkit';
import * as OTPAuth from 'otpauth';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type RunningApp, startApp } from '../src/app.js';

// The demo page's MFA part driven by a person's browser: Debian's Chromium with a CDP
// virtual authenticator, against the Express example on http://localhost:<port>.

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const reason = hasChromium
  ? ''
  : ` (skipped: ${CHROMIUM} not found; install it with apt-get install chromium)`;
const PASSWORD = 'Tangerine-Orbit-Velvet-4821';

/** Argon2 on a busy 2-core machine is slow: generous waits, still bounded. */
const poll = <T>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: 30_000 });

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as { port: number };
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

describe.skipIf(!hasChromium)(`demo page MFA in Chromium${reason}`, { timeout: 120_000 }, () => {
  let app: RunningApp;
  let origin: string;
  let context: BrowserContext;
  let profile: string;
  let page: Page;
  let mail: MailCatcher;

  beforeAll(async () => {
    const port = await freePort();
    origin = `http://localhost:${port}`;
    mail = await MailCatcher.start();
    app = await startApp({
      PORT: String(port),
      HOST: '127.0.0.1',
      ORIGIN: origin,
      WORKERS: '0',
      LOG_LEVEL: 'error',
      SMTP_URL: mail.url,
    });
    profile = mkdtempSync(join(tmpdir(), 'gatehouse-demo-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    context.setDefaultTimeout(60_000);
    page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
      },
    });
  });

  afterAll(async () => {
    await context?.close();
    await app?.close();
    await mail?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  const status = () => page.locator('#status');

  // Each test starts signed out (app.js keeps a refresh token in sessionStorage).
  beforeEach(async () => {
    await page.goto(`${origin}/`);
    await page.evaluate('sessionStorage.clear()');
    await page.goto(`${origin}/`);
  });

  async function logIn(email: string) {
    const form = page.locator('#login-form');
    // Seen once in CI under heavy load: the page came up without its signed-out view. A
    // fresh load then shows it; the flake is noted for a later look.
    if (!(await form.isVisible())) {
      await page.goto(`${origin}/`);
      await form.waitFor({ state: 'visible', timeout: 30_000 });
    }
    await form.locator('input[name=email]').fill(email);
    await form.locator('input[name=password]').fill(PASSWORD);
    await form.locator('button[type=submit]').click();
  }

  it('enrols TOTP from the QR code and a passkey, then completes an MFA login with the passkey', async () => {
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const email = `demo-mfa-${Date.now()}@example.test`;
    const signup = page.locator('#signup-form');
    await signup.locator('input[name=name]').fill('Demo Person');
    await signup.locator('input[name=email]').fill(email);
    await signup.locator('input[name=password]').fill(PASSWORD);
    await signup.locator('button[type=submit]').click();
    await poll(() => status().textContent()).toContain('Account created');
    await logIn(email);
    await page.locator('#mfa').getByText('Set up an authenticator app').click();

    const qr = page.locator('#mfa svg[role=img]');
    await qr.waitFor();
    expect(Number(await qr.evaluate((el) => el.getAttribute('viewBox')?.split(' ')[2]))).toBeGreaterThan(20);
    const secret = ((await page.locator('#mfa code.secret').textContent()) ?? '').replaceAll(' ', '');
    const code = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate();
    await page.locator('#mfa input[name=code]').fill(code);
    await page.locator('#mfa').getByRole('button', { name: 'Turn on' }).click();
    await poll(() => page.locator('#mfa .recovery-codes li').count()).toBe(10);
    await page.screenshot({ path: join(profile, 'recovery.png') });
    await page.getByRole('button', { name: 'I saved them' }).click();
    await poll(() => page.locator('#me').textContent()).toContain('totp');

    await page.locator('#mfa').getByRole('button', { name: 'Add a passkey' }).click();
    await poll(() => status().textContent()).toBe('Passkey added.');
    await poll(() => page.locator('#me').textContent()).toContain('webauthn');

    await page.locator('#logout').click();
    await poll(() => status().textContent()).toBe('Signed out.');
    await logIn(email);
    const challenge = page.locator('#mfa-challenge');
    await challenge.getByRole('button', { name: 'Use a passkey' }).click();
    await poll(() => status().textContent()).toBe('Signed in.');
    await poll(() => page.locator('#me').textContent()).toContain(email);
    expect(page.url()).toBe(`${origin}/`);
    expect(errors).toEqual([]);
  });

  it('completes an MFA login with a recovery code typed into the challenge form', async () => {
    const email = `demo-rc-${Date.now()}@example.test`;
    const res = await page.evaluate(
      async ({ email, password }) => {
        const post = (path: string, body: unknown, bearer?: string) =>
          fetch(path, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
            },
            body: JSON.stringify(body),
          }).then((r) => r.json() as Promise<Record<string, string>>);
        await post('/auth/signup', { name: 'Recovery Person', email, password });
        const { accessToken } = await post('/auth/login', { email, password });
        const setup = await post('/auth/mfa/totp/setup', {}, accessToken);
        return { secret: setup.secret!, accessToken: accessToken! };
      },
      { email, password: PASSWORD },
    );
    const code = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(res.secret) }).generate();
    const confirmed = await page.evaluate(
      async ({ code, access }) =>
        (
          await fetch('/auth/mfa/totp/confirm', {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${access}` },
            body: JSON.stringify({ code }),
          })
        ).json() as Promise<{ recoveryCodes: string[] }>,
      { code, access: res.accessToken },
    );
    await logIn(email);
    const challenge = page.locator('#mfa-challenge');
    await challenge.getByText('Use a recovery code').click();
    await challenge.locator('details input[name=code]').fill(confirmed.recoveryCodes[0]!);
    await challenge.locator('details button[type=submit]').click();
    await poll(() => status().textContent()).toBe('Signed in.');
    const used = await mail.waitFor(email, (m) => /recovery code was used/i.test(m.subject));
    expect(used.text).toContain('9 unused recovery codes remain');
  });

  it('with MFA_REQUIRED=on a new user enrols an authenticator app during the first login', async () => {
    const port = await freePort();
    const required = `http://localhost:${port}`;
    const strict = await startApp({
      PORT: String(port),
      HOST: '127.0.0.1',
      ORIGIN: required,
      WORKERS: '0',
      LOG_LEVEL: 'error',
      SMTP_URL: mail.url,
      MFA_REQUIRED: 'on',
    });
    try {
      await page.goto(`${required}/`);
      const email = `demo-req-${Date.now()}@example.test`;
      const signup = page.locator('#signup-form');
      await signup.locator('input[name=name]').fill('Required Person');
      await signup.locator('input[name=email]').fill(email);
      await signup.locator('input[name=password]').fill(PASSWORD);
      await signup.locator('button[type=submit]').click();
      await poll(() => status().textContent()).toContain('Account created');
      await logIn(email);
      const challenge = page.locator('#mfa-challenge');
      await challenge.getByRole('button', { name: 'Set up an authenticator app' }).click();
      const secret = ((await challenge.locator('code.secret').textContent()) ?? '').replaceAll(' ', '');
      const code = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate();
      await challenge.locator('input[name=code]').fill(code);
      await challenge.getByRole('button', { name: 'Turn on' }).click();
      await poll(() => challenge.locator('.recovery-codes li').count()).toBe(10);
      await challenge.getByRole('button', { name: 'I saved them: continue' }).click();
      await poll(() => status().textContent()).toBe('Signed in.');
      await poll(() => page.locator('#me').textContent()).toContain('totp');
    } finally {
      await strict.close();
    }
  });
});
