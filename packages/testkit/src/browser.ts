import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';

/** Debian's Chromium; the browser suites skip, saying why, where it is missing. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM_PATH);
/** Appended to a suite's title so a skipped run says what to install. */
export const chromiumSkipReason = hasChromium
  ? ''
  : ` (skipped: ${CHROMIUM_PATH} not found; install it with apt-get install chromium)`;

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Chromium {
  context: BrowserContext;
  /** A new tab (so a fresh sessionStorage), with its own CDP virtual authenticator when asked. */
  newPage(opts?: { authenticator?: boolean }): Promise<Page>;
  close(): Promise<void>;
}

/** Chromium on a throw-away profile. Argon2 on a busy 2-core machine is slow: waits are generous. */
export async function launchChromium(opts: { acceptDownloads?: boolean } = {}): Promise<Chromium> {
  // Imported here so the rest of the testkit works without playwright-core installed.
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'postern-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    args: FLAGS,
    acceptDownloads: opts.acceptDownloads ?? false,
  });
  context.setDefaultTimeout(60_000);
  return {
    context,
    async newPage({ authenticator = false } = {}) {
      const page = await context.newPage();
      if (authenticator) await addVirtualAuthenticator(page);
      return page;
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** A platform authenticator that holds passkeys and verifies the user, for this page only.
 *  One per test: with several credentials a `get` picks one at random. */
export async function addVirtualAuthenticator(page: Page): Promise<string> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
    },
  });
  return authenticatorId;
}

/** A loopback port nobody listens on right now, for an app that must know its origin first. */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as { port: number };
  await new Promise((resolve) => srv.close(resolve));
  return port;
}
