import { randomUUID } from 'node:crypto';
import { MailCatcher } from '@postern/testkit';
import {
  type Chromium,
  chromiumSkipReason,
  freePort,
  hasChromium,
  launchChromium,
} from '@postern/testkit/browser';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningApp, startApp } from '../src/app.js';

// The demo page's inbox part in Debian's Chromium: mail HTML must stay inside a script-less
// sandboxed iframe, replies go out, attachments download.

const PASSWORD = 'Juniper-Signal-Compass-3390';

describe.skipIf(!hasChromium)(`demo page inbox in Chromium${chromiumSkipReason}`, () => {
  let app: RunningApp;
  let origin: string;
  let browser: Chromium;
  let page: Page;
  let mail: MailCatcher;

  /** Mail arrives: the inbound consumer runs as the outbox would run it. */
  const receive = (data: Record<string, unknown>) =>
    app.ph.inbox.consumers.inbound({
      id: randomUUID(),
      name: 'inbox.mail.webhook.inbound.received',
      payload: JSON.stringify({ type: 'email.received', data: { email_id: randomUUID(), ...data } }),
      attempt: 1,
      createdAt: new Date(),
    });

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
    browser = await launchChromium({ acceptDownloads: true });
    page = await browser.newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await mail?.close();
  });

  it('shows mail HTML only in a sandboxed frame where its scripts never run, and replies', async () => {
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const email = `inbox-demo-${randomUUID()}@example.test`;
    const address = `desk-${randomUUID()}@acme.test`;
    await page.goto(`${origin}/`);
    await page.locator('body[data-ready]').waitFor({ state: 'attached' });
    await page.evaluate(
      async ({ email, password }) => {
        await fetch('/auth/signup', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'Inbox Demo', email, password }),
        });
      },
      { email, password: PASSWORD },
    );
    const login = page.locator('#login-form');
    await login.locator('input[name=email]').fill(email);
    await login.locator('input[name=password]').fill(PASSWORD);
    await login.locator('button[type=submit]').click();

    const inbox = page.locator('#inbox');
    await inbox.locator('input[name=address]').fill(address);
    await inbox.locator('input[name=name]').fill('Front desk');
    await inbox.getByRole('button', { name: 'Create inbox account' }).click();
    await expect.poll(() => page.locator('#status').textContent()).toBe('Inbox account created.');

    const hostile =
      '<p id="hello">Hello from <b>mail</b></p>' +
      '<script>parent.document.body.dataset.pwned = "script"</script>' +
      '<img src="x" onerror="parent.document.body.dataset.pwned = \'onerror\'">';
    const outcome = await receive({
      from: 'Ann <ann@customer.test>',
      to: [address],
      subject: 'Hostile HTML',
      html: hostile,
      message_id: '<hostile-1@customer.test>',
      attachments: [
        {
          filename: 'notes.txt',
          content_type: 'text/plain',
          content: Buffer.from('the notes').toString('base64'),
        },
      ],
    });
    expect(outcome).toEqual({ outcome: 'stored' });

    await inbox.getByRole('button', { name: `Front desk <${address}>` }).click();
    await inbox.getByRole('button', { name: 'Hostile HTML' }).click();
    const frame = inbox.locator('iframe.mail-html');
    await frame.waitFor();
    expect(await frame.getAttribute('sandbox')).toBe('');
    expect(await frame.evaluate((f) => (f as HTMLIFrameElement).srcdoc)).toContain(hostile);
    await expect.poll(() => frame.contentFrame().locator('#hello').textContent()).toBe('Hello from mail');
    expect(await page.evaluate(() => document.body.dataset.pwned)).toBeUndefined();
    // Nothing of the mail became part of this document.
    expect(await page.locator('#hello').count()).toBe(0);

    const downloading = page.waitForEvent('download');
    await inbox.getByRole('button', { name: 'Download notes.txt' }).click();
    const file = await downloading;
    expect(file.suggestedFilename()).toBe('notes.txt');

    await inbox.locator('textarea[name=text]').fill('Thanks, Ann.');
    await inbox.getByRole('button', { name: 'Send reply' }).click();
    await expect.poll(() => page.locator('#status').textContent()).toBe('Reply sent.');
    const sent = await mail.waitFor('ann@customer.test');
    expect(sent.subject).toBe('Re: Hostile HTML');
    expect(sent.headers.get('in-reply-to')).toBe('<hostile-1@customer.test>');
    expect(await page.evaluate(() => document.body.dataset.pwned)).toBeUndefined();
    // The reply moved the thread: the list shows it without a reload.
    expect(await inbox.locator('ul.threads li').allTextContents()).toEqual([
      expect.stringMatching(/^Hostile HTML 2 message\(s\)/),
    ]);

    // New mail shows after "Check for new mail", newest first.
    const second = await receive({
      from: 'Bo <bo@customer.test>',
      to: [address],
      subject: 'Second',
      text: 'hi',
    });
    expect(second).toEqual({ outcome: 'stored' });
    const check = inbox.getByRole('button', { name: 'Check for new mail' });
    // Scrolled down to the reply form, Playwright's click alone often left the list as it was
    // (the button was far above the viewport); scrolling to it first made it reliable.
    await check.scrollIntoViewIfNeeded();
    await check.click();
    await expect
      .poll(() => inbox.locator('ul.threads li').allTextContents(), { timeout: 5000 })
      .toEqual([
        expect.stringMatching(/^Second 1 message\(s\)/),
        expect.stringMatching(/^Hostile HTML 2 message\(s\)/),
      ]);
    expect(errors).toEqual([]);
  });

  it('leaves out the sign-up form when sign-up is switched off, and asks for no favicon', async () => {
    const port = await freePort();
    const closed = await startApp({
      PORT: String(port),
      HOST: '127.0.0.1',
      ORIGIN: `http://localhost:${port}`,
      WORKERS: '0',
      LOG_LEVEL: 'error',
      SIGNUP: 'off',
    });
    const other = await browser.newPage();
    const paths: string[] = [];
    other.on('request', (r) => paths.push(new URL(r.url()).pathname));
    try {
      await other.goto(`http://localhost:${port}/`);
      await other.locator('body[data-ready]').waitFor({ state: 'attached' });
      expect(await other.locator('#signup-form').count()).toBe(0);
      expect(await other.locator('#login-form').count()).toBe(1);
      await other.goto(`${origin}/`);
      await other.locator('body[data-ready]').waitFor({ state: 'attached' });
      expect(await other.locator('#signup-form').count()).toBe(1);
      expect(paths).not.toContain('/favicon.ico');
    } finally {
      await other.close();
      await closed.close();
    }
  });
});
