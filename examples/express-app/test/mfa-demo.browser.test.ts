import { MailCatcher } from '@postern/testkit';
import {
  type Chromium,
  chromiumSkipReason,
  freePort,
  hasChromium,
  launchChromium,
} from '@postern/testkit/browser';
import * as OTPAuth from 'otpauth';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type RunningApp, startApp } from '../src/app.js';

// The demo page's MFA part driven by a person's browser: Debian's Chromium with a CDP
// virtual authenticator, against the Express example on http://localhost:<port>.

const PASSWORD = 'Tangerine-Orbit-Velvet-4821';

/** Argon2 on a busy 2-core machine is slow: generous waits, still bounded. */
const poll = <T>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: 30_000 });

describe.skipIf(!hasChromium)(`demo page MFA in Chromium${chromiumSkipReason}`, { timeout: 120_000 }, () => {
  let app: RunningApp;
  let origin: string;
  let browser: Chromium;
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
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await mail?.close();
  });

  /** Opens the demo page and waits until app.js has decided what to show. */
  async function open(at: string) {
    await page.goto(`${at}/`);
    await page.locator('body[data-ready]').waitFor({ state: 'attached' });
  }

  // Each test starts signed out (the session is a cookie every tab shares: it goes first)
  // in a new tab with its own virtual authenticator.
  beforeEach(async () => {
    await browser.context.clearCookies();
    page = await browser.newPage({ authenticator: true });
    await open(origin);
    return () => page.close();
  });

  const status = () => page.locator('#status');

  async function signUp(name: string, email: string) {
    const form = page.locator('#signup-form');
    await form.locator('input[name=name]').fill(name);
    await form.locator('input[name=email]').fill(email);
    await form.locator('input[name=password]').fill(PASSWORD);
    await form.locator('button[type=submit]').click();
    await poll(() => status().textContent()).toContain('Account created');
  }

  async function logIn(email: string) {
    const form = page.locator('#login-form');
    await form.locator('input[name=email]').fill(email);
    await form.locator('input[name=password]').fill(PASSWORD);
    await form.locator('button[type=submit]').click();
  }

  it('enrols TOTP from the QR code and a passkey, then completes an MFA login with the passkey', async () => {
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const email = `demo-mfa-${Date.now()}@example.test`;
    await signUp('Demo Person', email);
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

  it('turns on email codes with a mailed code, then signs in with the code mailed at login', async () => {
    const email = `demo-otp-${Date.now()}@example.test`;
    const sixDigits = (text: string) => /\b(\d{6})\b/.exec(text)![1]!;
    await signUp('Otp Person', email);
    await logIn(email);
    await page.locator('#mfa').getByRole('button', { name: 'Use email codes' }).click();
    await poll(() => status().textContent()).toBe(`A code was mailed to ${email}.`);
    const setup = await mail.waitFor(email, (m) => m.subject === 'Your sign-in code');
    await page.locator('#mfa input[name=code]').fill(sixDigits(setup.text));
    await page.locator('#mfa').getByRole('button', { name: 'Turn on' }).click();
    await poll(() => page.locator('#mfa .recovery-codes li').count()).toBe(10);
    await page.getByRole('button', { name: 'I saved them' }).click();
    await poll(() => page.locator('#me').textContent()).toContain('email');

    await page.locator('#logout').click();
    await poll(() => status().textContent()).toBe('Signed out.');
    const before = mail.to(email).length;
    await logIn(email);
    const challenge = page.locator('#mfa-challenge');
    await challenge.getByText('We mailed you a six-digit code.').waitFor();
    const atLogin = await mail.waitFor(
      email,
      (m) => m.subject === 'Your sign-in code' && mail.to(email).indexOf(m) >= before,
    );
    const form = challenge.locator('form').filter({ has: page.getByLabel('Code from the mail') });
    await form.locator('input[name=code]').fill(sixDigits(atLogin.text));
    await form.getByRole('button', { name: 'Continue' }).click();
    await poll(() => status().textContent()).toBe('Signed in.');
    await poll(() => page.locator('#me').textContent()).toContain(email);
  });

  it('confirms the email address with a mailed code from the account section', async () => {
    const email = `demo-verify-${Date.now()}@example.test`;
    await signUp('Verify Person', email);
    await logIn(email);
    await poll(() => page.locator('#me').textContent()).toContain('(not confirmed)');
    const form = page.locator('#verify-form');
    await form.getByRole('button', { name: 'Mail me a confirmation code' }).click();
    await poll(() => status().textContent()).toBe('A confirmation code is on its way.');
    const sent = await mail.waitFor(email, (m) => m.subject === 'Confirm your email address');
    await form.locator('input[name=code]').fill(/\b(\d{6})\b/.exec(sent.text)![1]!);
    await form.getByRole('button', { name: 'Confirm email' }).click();
    await poll(() => status().textContent()).toBe('Email address confirmed.');
    await poll(() => page.locator('#me').textContent()).toContain('(confirmed)');
    expect(await form.isHidden()).toBe(true);
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
      await open(required);
      const email = `demo-req-${Date.now()}@example.test`;
      await signUp('Required Person', email);
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
