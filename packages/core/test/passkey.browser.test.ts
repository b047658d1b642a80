import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { createPostern, type Postern } from '@postern/core';
import { type Chromium, chromiumSkipReason, hasChromium, launchChromium } from '@postern/testkit/browser';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

// A real browser (Debian's Chromium) with a CDP virtual authenticator does the WebAuthn
// ceremonies against Postern on a real HTTP server at http://localhost:<port>.

const PASSWORD = 'Tangerine-Orbit-Velvet-4821';
const require = createRequire(import.meta.url);
const browserBundle = join(
  dirname(require.resolve('@simplewebauthn/browser')),
  '..',
  'dist',
  'bundle',
  'index.umd.min.js',
);

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>passkey test</title>
<script src="/vendor/simplewebauthn-browser.js"></script></head><body>passkey test</body></html>`;

/** Postern on node:http, plus the test page and the @simplewebauthn/browser bundle. */
async function serve(): Promise<{ server: Server; origin: string; ph: Postern }> {
  let ph!: Postern;
  const server = createServer(async (req, res) => {
    try {
      const out = await ph.handle({
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        headers: req.headers,
        body: req,
        ip: req.socket.remoteAddress,
      });
      if (out) {
        res.writeHead(out.status, out.headers).end(out.body ?? undefined);
      } else if (req.url === '/') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
      } else if (req.url === '/vendor/simplewebauthn-browser.js') {
        res.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(browserBundle));
      } else {
        res.writeHead(404).end();
      }
    } catch {
      res.writeHead(500).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://localhost:${(server.address() as AddressInfo).port}`;
  ph = createPostern({
    issuer: origin,
    audience: 'passkey-test',
    webauthn: { rpId: 'localhost', rpName: 'Postern passkey test', origin },
  });
  return { server, origin, ph };
}

describe.skipIf(!hasChromium)(
  `passkeys in Chromium with a virtual authenticator${chromiumSkipReason}`,
  { timeout: 120_000 },
  () => {
    let server: Server;
    let origin: string;
    let browser: Chromium;
    let page: Page;

    beforeAll(async () => {
      ({ server, origin } = await serve());
      browser = await launchChromium();
    });

    afterAll(async () => {
      await browser?.close();
      await new Promise((resolve) => server?.close(resolve));
    });

    // One page and one fresh virtual authenticator per test.
    beforeEach(async () => {
      page = await browser.newPage({ authenticator: true });
      await page.goto(`${origin}/`);
      return async () => {
        await page.close();
      };
    });

    /** `fetch` from inside the page: JSON in and out, tokens only in headers and bodies. */
    async function call(path: string, body?: unknown, bearer?: string) {
      return page.evaluate(
        async ({ path, body, bearer }) => {
          const headers: Record<string, string> = {};
          if (body !== undefined) headers['content-type'] = 'application/json';
          if (bearer) headers.authorization = `Bearer ${bearer}`;
          const res = await fetch(path, {
            method: body === undefined && !bearer ? 'GET' : 'POST',
            headers,
            body: body === undefined ? undefined : JSON.stringify(body),
          });
          const text = await res.text();
          return { status: res.status, body: text ? JSON.parse(text) : null };
        },
        { path, body, bearer },
      );
    }

    async function accountWithPasskey() {
      const email = `passkey-${Date.now()}-${Math.random().toString(36).slice(2)}@example.test`;
      expect((await call('/auth/signup', { name: 'Passkey Person', email, password: PASSWORD })).status).toBe(
        201,
      );
      const login = await call('/auth/login', { email, password: PASSWORD });
      expect(login.status).toBe(200);
      const access = login.body.accessToken as string;
      const enrolled = await page.evaluate(async (access) => {
        const auth = { authorization: `Bearer ${access}` };
        const optionsJSON = await (
          await fetch('/auth/mfa/webauthn/register/options', { method: 'POST', headers: auth })
        ).json();
        // The UMD bundle's global.
        const attestationResponse = await (globalThis as any).SimpleWebAuthnBrowser.startRegistration({
          optionsJSON,
        });
        const res = await fetch('/auth/mfa/webauthn/register/verify', {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ attestationResponse, name: 'Chromium virtual authenticator' }),
        });
        return { status: res.status, body: await res.json() };
      }, access);
      expect(enrolled.status).toBe(200);
      return { email, access, enrolled: enrolled.body as { credentialId: string; recoveryCodes?: string[] } };
    }

    /** Asks for options with the pending token and lets the browser sign them. */
    async function browserAssertion(mfaToken: string) {
      return page.evaluate(async (mfaToken) => {
        const optionsJSON = await (
          await fetch('/auth/mfa/webauthn/options', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ mfaToken }),
          })
        ).json();
        // The UMD bundle's global.
        return (globalThis as any).SimpleWebAuthnBrowser.startAuthentication({ optionsJSON });
      }, mfaToken);
    }

    it('enrols a passkey and then logs in with password and passkey', async () => {
      const { email, enrolled } = await accountWithPasskey();
      expect(enrolled.credentialId).toEqual(expect.any(String));
      expect(enrolled.recoveryCodes).toHaveLength(10);

      const pending = await call('/auth/login', { email, password: PASSWORD, refreshToken: true });
      expect(pending.body).toMatchObject({ mfaRequired: true, methods: ['webauthn', 'recovery'] });
      const assertionResponse = await browserAssertion(pending.body.mfaToken);
      expect(assertionResponse.id).toBe(enrolled.credentialId);
      const session = await call('/auth/mfa/webauthn/verify', {
        mfaToken: pending.body.mfaToken,
        assertionResponse,
      });
      expect(session.status).toBe(200);
      expect(session.body).toMatchObject({ tokenType: 'Bearer', refreshToken: expect.any(String) });
      const me = await page.evaluate(async (access) => {
        const res = await fetch('/auth/me', { headers: { authorization: `Bearer ${access}` } });
        return (await res.json()) as { user: { mfa: unknown } };
      }, session.body.accessToken as string);
      expect(me.user.mfa).toEqual({ enabled: true, methods: ['webauthn'] });
    });

    it('rejects a tampered assertion from the browser', async () => {
      const { email } = await accountWithPasskey();
      const pending = await call('/auth/login', { email, password: PASSWORD });
      const genuine = await browserAssertion(pending.body.mfaToken);
      const data = Buffer.from(genuine.response.clientDataJSON, 'base64url');
      const clientData = JSON.parse(data.toString());
      const forged = Buffer.from(
        JSON.stringify({ ...clientData, challenge: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }),
      );
      const tampered = {
        ...genuine,
        response: { ...genuine.response, clientDataJSON: forged.toString('base64url') },
      };
      const refused = await call('/auth/mfa/webauthn/verify', {
        mfaToken: pending.body.mfaToken,
        assertionResponse: tampered,
      });
      expect(refused.status).toBe(401);
      expect(refused.body.code).toBe('invalid_code');

      // The challenge died with the failure: a flipped signature on fresh options fails too,
      // and only an untouched assertion on fresh options completes the login.
      const second = await browserAssertion(pending.body.mfaToken);
      const sig = Buffer.from(second.response.signature, 'base64url');
      sig[sig.length - 1]! ^= 1;
      const badSig = { ...second, response: { ...second.response, signature: sig.toString('base64url') } };
      expect(
        (
          await call('/auth/mfa/webauthn/verify', {
            mfaToken: pending.body.mfaToken,
            assertionResponse: badSig,
          })
        ).status,
      ).toBe(401);
      const third = await browserAssertion(pending.body.mfaToken);
      const ok = await call('/auth/mfa/webauthn/verify', {
        mfaToken: pending.body.mfaToken,
        assertionResponse: third,
      });
      expect(ok.status).toBe(200);
    });
  },
);
