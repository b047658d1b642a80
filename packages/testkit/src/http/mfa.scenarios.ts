import { randomBytes, randomUUID } from 'node:crypto';
import * as OTPAuth from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestClock } from '../test-clock.js';
import { APP_ORIGIN, fromPage, refreshCookieOf } from './browser.scenarios.js';
import { expectProblem } from './expect.js';
import type { HttpContext, HttpEnv } from './harness.js';
import { expectJson, freshEmail, proveEmail, signUp, signUpAndLogIn } from './session.js';
import { SoftAuthenticator } from './soft-authenticator.js';

const ORIGIN = 'https://postern.test';
const PASSWORD = 'Tangerine-Orbit-Velvet-4821';
const STEP = 30_000;

/** Options every MFA scenario runs with: a pinned relying party and a sealing key. */
const MFA_OPTIONS = {
  webauthn: { rpId: 'postern.test', rpName: 'Postern test', origin: ORIGIN },
  mfa: { encryptionKey: randomBytes(32) },
};

interface Account {
  email: string;
  password: string;
  access: string;
}
interface Session {
  accessToken: string;
  tokenType: string;
  expiresIn: number;
  refreshToken?: string;
}
interface Pending {
  mfaRequired: true;
  mfaToken: string;
  methods: string[];
}

/** The TOTP code an authenticator app shows at the server's clock (`steps` away). */
function totp(secret: string, clock: TestClock, steps = 0): string {
  return new OTPAuth.TOTP({
    secret: OTPAuth.Secret.fromBase32(secret),
    algorithm: 'SHA1',
    digits: 6,
    period: 30,
  }).generate({ timestamp: clock.now().getTime() + steps * STEP });
}

async function signupAndLogin(ctx: HttpContext, password = PASSWORD): Promise<Account> {
  const a = await signUpAndLogIn(ctx, { email: freshEmail('mfa'), password, name: 'Mfa Tester' });
  return { email: a.email, password, access: a.accessToken };
}

async function login(ctx: HttpContext, a: Account, refreshToken?: boolean | 'cookie') {
  return ctx.request('/auth/login', {
    json: { email: a.email, password: a.password, ...(refreshToken === undefined ? {} : { refreshToken }) },
  });
}

async function pendingLogin(
  ctx: HttpContext,
  a: Account,
  refreshToken?: boolean | 'cookie',
): Promise<Pending> {
  const body = await expectJson<Pending & { accessToken?: string }>(await login(ctx, a, refreshToken), 200);
  expect(body.mfaRequired).toBe(true);
  expect(body.accessToken).toBeUndefined();
  return body;
}

/** A right TOTP code no longer completes this pending login. */
async function expectPendingDead(ctx: HttpContext, p: Pending, secret: string): Promise<void> {
  await expectProblem(
    await ctx.request('/auth/mfa/verify', { json: { token: p.mfaToken, code: totp(secret, ctx.clock) } }),
    401,
    'invalid_token',
  );
}

async function enrolTotp(
  ctx: HttpContext,
  a: Account,
): Promise<{ secret: string; recoveryCodes?: string[] }> {
  const setup = await expectJson<{ secret: string; otpauthUri: string }>(
    await ctx.request('/auth/mfa/totp/setup', { method: 'POST', bearer: a.access }),
    200,
  );
  const done = await expectJson<{ recoveryCodes?: string[] }>(
    await ctx.request('/auth/mfa/totp/confirm', {
      json: { code: totp(setup.secret, ctx.clock) },
      bearer: a.access,
    }),
    200,
  );
  // The confirming code's step is used up; the next login needs the next one.
  ctx.clock.advance(STEP);
  return { secret: setup.secret, recoveryCodes: done.recoveryCodes };
}

/** Waits for the next mail to `to` with a six-digit code (after `seen` such mails) and returns the code. */
async function nextCode(ctx: HttpContext, to: string, seen: number): Promise<string> {
  const isCode = (m: { subject: string }) => m.subject === 'Your sign-in code';
  const deadline = Date.now() + 5000;
  while (ctx.mail.to(to).filter(isCode).length <= seen) {
    if (Date.now() > deadline) throw new Error(`no code mail #${seen + 1} to ${to}`);
    await ctx.mail.waitFor(to, (m) => isCode(m) && ctx.mail.to(to).filter(isCode).length > seen, 5000);
  }
  const mail = ctx.mail.to(to).filter(isCode)[seen]!;
  const m = /\b(\d{6})\b/.exec(mail.text);
  if (!m) throw new Error('no code in the mail');
  return m[1]!;
}

/** Eight parallel copies of one right answer: exactly one session, seven 401 `invalid_token`. */
async function expectOneWinner(ctx: HttpContext, path: string, body: Record<string, unknown>): Promise<void> {
  const answers = await Promise.all(Array.from({ length: 8 }, () => ctx.request(path, { json: body })));
  const bodies = await Promise.all(
    answers.map(async (r) => ({ status: r.status, code: ((await r.json()) as { code?: string }).code })),
  );
  expect(bodies.filter((b) => b.status === 200)).toHaveLength(1);
  expect(bodies.filter((b) => b.status === 401).map((b) => b.code)).toEqual(Array(7).fill('invalid_token'));
}

const codeMails = (ctx: HttpContext, to: string) =>
  ctx.mail.to(to).filter((m) => m.subject === 'Your sign-in code').length;

async function enrolEmail(ctx: HttpContext, a: Account): Promise<{ recoveryCodes?: string[] }> {
  const seen = codeMails(ctx, a.email);
  await expectJson(await ctx.request('/auth/mfa/email/setup', { method: 'POST', bearer: a.access }), 202);
  const code = await nextCode(ctx, a.email, seen);
  // The mail says what entering the code does here (not "did you try to sign in").
  const mail = ctx.mail.to(a.email).filter((m) => m.subject === 'Your sign-in code')[seen]!;
  expect(mail.text).toMatch(/turns on sign-in codes by email/);
  return expectJson(await ctx.request('/auth/mfa/email/confirm', { json: { code }, bearer: a.access }), 200);
}

async function enrolPasskey(ctx: HttpContext, a: Account, auth = new SoftAuthenticator(ORIGIN)) {
  const options = await expectJson<{ challenge: string; rp: { id: string }; user: { id: string } }>(
    await ctx.request('/auth/mfa/webauthn/register/options', { method: 'POST', bearer: a.access }),
    200,
  );
  const body = await expectJson<{ credentialId: string; recoveryCodes?: string[] }>(
    await ctx.request('/auth/mfa/webauthn/register/verify', {
      json: { attestationResponse: auth.register(options), name: 'Test key' },
      bearer: a.access,
    }),
    200,
  );
  return { auth, ...body };
}

/** Fresh options for the pending login, then `/auth/mfa/webauthn/verify` with `auth`'s assertion. */
async function verifyPasskey(
  ctx: HttpContext,
  mfaToken: string,
  auth: SoftAuthenticator,
  over?: Parameters<SoftAuthenticator['assert']>[1],
) {
  const assertionResponse = auth.assert(await passkeyOptions(ctx, mfaToken), over);
  return ctx.request('/auth/mfa/webauthn/verify', { json: { mfaToken, assertionResponse } });
}

async function passkeyOptions(ctx: HttpContext, mfaToken: string) {
  return expectJson<{ challenge: string; rpId: string; allowCredentials: Array<{ id: string }> }>(
    await ctx.request('/auth/mfa/webauthn/options', { json: { mfaToken } }),
    200,
  );
}

async function me(ctx: HttpContext, access: string) {
  return expectJson<{ user: { mfa: { enabled: boolean; methods: string[] } } }>(
    await ctx.request('/auth/me', { bearer: access }),
    200,
  );
}

/** MFA login routes and the enrolment table; pending tokens and codes. */
export function mfaScenarios(env: HttpEnv): void {
  describe('MFA with the email method switched off by the host', () => {
    let ctx: HttpContext;
    beforeAll(async () => {
      ctx = await env.setup({ ...MFA_OPTIONS, mfa: { ...MFA_OPTIONS.mfa, methods: ['totp', 'webauthn'] } });
    });
    afterAll(() => ctx?.close());

    it('email enrolment answers 404 while TOTP still works', async () => {
      const a = await signupAndLogin(ctx);
      await expectProblem(
        await ctx.request('/auth/mfa/email/setup', { method: 'POST', bearer: a.access }),
        404,
        'not_found',
      );
      const { secret } = await enrolTotp(ctx, a);
      const p = await pendingLogin(ctx, a);
      expect(p.methods).toEqual(['totp', 'recovery']);
      await expectJson(
        await ctx.request('/auth/mfa/verify', { json: { token: p.mfaToken, code: totp(secret, ctx.clock) } }),
        200,
      );
    });
  });

  describe('MFA with mfa.required', () => {
    let ctx: HttpContext;
    beforeAll(async () => {
      ctx = await env.setup({ ...MFA_OPTIONS, mfa: { ...MFA_OPTIONS.mfa, required: true } });
    });
    afterAll(() => ctx?.close());

    /** Signs up; the login answers an enrolment-only pending token. */
    async function unenrolled() {
      const { email } = await signUp(ctx, {
        email: freshEmail('req'),
        password: PASSWORD,
        name: 'Req Tester',
      });
      const a: Account = { email, password: PASSWORD, access: '' };
      return { a, p: await pendingLogin(ctx, a, true) };
    }

    it('a user without a method gets an enrolment-only pending token, never an access token', async () => {
      const { p } = await unenrolled();
      expect(p.methods).toEqual([]);
      expect((p as Pending & { enrol: string[] }).enrol).toEqual(['totp', 'email', 'webauthn']);
      await expectProblem(await ctx.request('/auth/me', { bearer: p.mfaToken }), 401, 'invalid_token');
      await expectProblem(
        await ctx.request('/auth/mfa/verify', {
          json: { token: p.mfaToken, code: '123456', methodType: 'totp' },
        }),
        400,
        'validation_failed',
      );
      await expectProblem(
        await ctx.request('/auth/mfa/resend', { json: { token: p.mfaToken } }),
        409,
        'nothing_to_resend',
      );
    });

    it('enrolling TOTP with the pending token completes the login with recovery codes', async () => {
      const { a, p } = await unenrolled();
      const setup = await expectJson<{ secret: string }>(
        await ctx.request('/auth/mfa/enrol/totp/setup', { json: { mfaToken: p.mfaToken } }),
        200,
      );
      await expectProblem(
        await ctx.request('/auth/mfa/enrol/totp/confirm', { json: { mfaToken: p.mfaToken, code: '000000' } }),
        401,
        'invalid_code',
      );
      const s = await expectJson<Session & { recoveryCodes: string[] }>(
        await ctx.request('/auth/mfa/enrol/totp/confirm', {
          json: { mfaToken: p.mfaToken, code: totp(setup.secret, ctx.clock) },
        }),
        200,
      );
      expect(s.refreshToken).toEqual(expect.any(String));
      expect(s.recoveryCodes).toHaveLength(10);
      expect((await me(ctx, s.accessToken)).user.mfa).toEqual({ enabled: true, methods: ['totp'] });
      await expectProblem(
        await ctx.request('/auth/mfa/enrol/totp/setup', { json: { mfaToken: p.mfaToken } }),
        401,
        'invalid_token',
      );
      ctx.clock.advance(STEP);
      const next = await pendingLogin(ctx, a);
      expect(next.methods).toEqual(['totp', 'recovery']);
      await expectJson(
        await ctx.request('/auth/mfa/verify', {
          json: { token: next.mfaToken, code: totp(setup.secret, ctx.clock) },
        }),
        200,
      );
    });

    it('an enrolment token stops working once the user has a method', async () => {
      const { a, p } = await unenrolled();
      const other = await pendingLogin(ctx, a);
      const setup = await expectJson<{ secret: string }>(
        await ctx.request('/auth/mfa/enrol/totp/setup', { json: { mfaToken: p.mfaToken } }),
        200,
      );
      await expectJson(
        await ctx.request('/auth/mfa/enrol/totp/confirm', {
          json: { mfaToken: p.mfaToken, code: totp(setup.secret, ctx.clock) },
        }),
        200,
      );
      for (const path of [
        '/auth/mfa/enrol/totp/setup',
        '/auth/mfa/enrol/email/setup',
        '/auth/mfa/enrol/webauthn/options',
      ]) {
        await expectProblem(
          await ctx.request(path, { json: { mfaToken: other.mfaToken } }),
          401,
          'invalid_token',
        );
      }
    });

    it('a passkey or the email method can be the first method too', async () => {
      const first = await unenrolled();
      const auth = new SoftAuthenticator(ORIGIN);
      const options = await expectJson<{ challenge: string; rp: { id: string }; user: { id: string } }>(
        await ctx.request('/auth/mfa/enrol/webauthn/options', { json: { mfaToken: first.p.mfaToken } }),
        200,
      );
      const s1 = await expectJson<Session & { credentialId: string; recoveryCodes: string[] }>(
        await ctx.request('/auth/mfa/enrol/webauthn/verify', {
          json: { mfaToken: first.p.mfaToken, attestationResponse: auth.register(options) },
        }),
        200,
      );
      expect(s1).toMatchObject({ credentialId: auth.id, accessToken: expect.any(String) });
      expect(s1.recoveryCodes).toHaveLength(10);

      const second = await unenrolled();
      const seen = codeMails(ctx, second.a.email);
      await expectJson(
        await ctx.request('/auth/mfa/enrol/email/setup', { json: { mfaToken: second.p.mfaToken } }),
        202,
      );
      const code = await nextCode(ctx, second.a.email, seen);
      const s2 = await expectJson<Session & { recoveryCodes: string[] }>(
        await ctx.request('/auth/mfa/enrol/email/confirm', { json: { mfaToken: second.p.mfaToken, code } }),
        200,
      );
      expect((await me(ctx, s2.accessToken)).user.mfa).toEqual({ enabled: true, methods: ['email'] });
    });

    it('five wrong enrolment codes kill the enrolment token', async () => {
      const { p } = await unenrolled();
      const setup = await expectJson<{ secret: string }>(
        await ctx.request('/auth/mfa/enrol/totp/setup', { json: { mfaToken: p.mfaToken } }),
        200,
      );
      const wrong = String((Number(totp(setup.secret, ctx.clock)) + 1) % 1_000_000).padStart(6, '0');
      for (let i = 0; i < 5; i++) {
        await expectProblem(
          await ctx.request('/auth/mfa/enrol/totp/confirm', { json: { mfaToken: p.mfaToken, code: wrong } }),
          401,
          'invalid_code',
        );
      }
      await expectProblem(
        await ctx.request('/auth/mfa/enrol/totp/confirm', {
          json: { mfaToken: p.mfaToken, code: totp(setup.secret, ctx.clock) },
        }),
        401,
        'invalid_token',
      );
    });
  });

  describe('MFA', () => {
    let ctx: HttpContext;
    beforeAll(async () => {
      ctx = await env.setup(MFA_OPTIONS);
    });
    afterAll(() => ctx?.close());

    describe('TOTP enrolment', () => {
      it('setup returns a base32 seed of 20 bytes and an otpauth URI naming the issuer and the account', async () => {
        const a = await signupAndLogin(ctx);
        const body = await expectJson<{ secret: string; otpauthUri: string }>(
          await ctx.request('/auth/mfa/totp/setup', { method: 'POST', bearer: a.access }),
          200,
        );
        expect(body.secret).toMatch(/^[A-Z2-7]{32}$/);
        const parsed = OTPAuth.URI.parse(body.otpauthUri) as OTPAuth.TOTP;
        expect(parsed).toBeInstanceOf(OTPAuth.TOTP);
        expect(parsed.secret.base32).toBe(body.secret);
        expect(parsed.label).toBe(a.email);
        expect(parsed.issuer).toBe('postern.test');
        expect([parsed.algorithm, parsed.digits, parsed.period]).toEqual(['SHA1', 6, 30]);
      });

      it('a seed is not active until confirmed: login still answers a session', async () => {
        const a = await signupAndLogin(ctx);
        await expectJson(
          await ctx.request('/auth/mfa/totp/setup', { method: 'POST', bearer: a.access }),
          200,
        );
        const s = await expectJson<Session>(await login(ctx, a), 200);
        expect(s.accessToken).toEqual(expect.any(String));
        expect((await me(ctx, s.accessToken)).user.mfa).toEqual({ enabled: false, methods: [] });
      });

      it('confirm refuses a wrong code with 401 invalid_code and then accepts the right one', async () => {
        const a = await signupAndLogin(ctx);
        const { secret } = await expectJson<{ secret: string }>(
          await ctx.request('/auth/mfa/totp/setup', { method: 'POST', bearer: a.access }),
          200,
        );
        const wrong = String((Number(totp(secret, ctx.clock)) + 1) % 1_000_000).padStart(6, '0');
        await expectProblem(
          await ctx.request('/auth/mfa/totp/confirm', { json: { code: wrong }, bearer: a.access }),
          401,
          'invalid_code',
        );
        const ok = await expectJson<{ recoveryCodes: string[] }>(
          await ctx.request('/auth/mfa/totp/confirm', {
            json: { code: totp(secret, ctx.clock) },
            bearer: a.access,
          }),
          200,
        );
        expect(ok.recoveryCodes).toHaveLength(10);
        expect(new Set(ok.recoveryCodes).size).toBe(10);
        expect((await me(ctx, a.access)).user.mfa).toEqual({ enabled: true, methods: ['totp'] });
      });

      it('confirm without a setup answers 401 invalid_code', async () => {
        const a = await signupAndLogin(ctx);
        await expectProblem(
          await ctx.request('/auth/mfa/totp/confirm', { json: { code: '123456' }, bearer: a.access }),
          401,
          'invalid_code',
        );
      });

      it('enrolment needs a Bearer access token', async () => {
        await expectProblem(
          await ctx.request('/auth/mfa/totp/setup', { method: 'POST' }),
          401,
          'invalid_token',
        );
      });

      it('without mfa.required the enrolment-at-login routes do not exist', async () => {
        const a = await signupAndLogin(ctx);
        await enrolTotp(ctx, a);
        const p = await pendingLogin(ctx, a);
        await expectProblem(
          await ctx.request('/auth/mfa/enrol/totp/setup', { json: { mfaToken: p.mfaToken } }),
          404,
          'not_found',
        );
      });

      it('setup needs fresh authentication: 403 reauth_required after 10 minutes, unless the password is sent', async () => {
        const a = await signupAndLogin(ctx);
        ctx.clock.advance(11 * 60_000);
        await expectProblem(
          await ctx.request('/auth/mfa/totp/setup', { method: 'POST', bearer: a.access }),
          403,
          'reauth_required',
        );
        await expectProblem(
          await ctx.request('/auth/mfa/totp/setup', {
            json: { password: 'Wrong-Password-123' },
            bearer: a.access,
          }),
          403,
          'reauth_required',
        );
        await expectJson(
          await ctx.request('/auth/mfa/totp/setup', { json: { password: a.password }, bearer: a.access }),
          200,
        );
      });
    });

    describe('pending login with TOTP', () => {
      it('login answers mfaRequired with a pending token and the methods, and no session', async () => {
        const a = await signupAndLogin(ctx);
        await enrolTotp(ctx, a);
        const p = await pendingLogin(ctx, a);
        expect(p.methods).toEqual(['totp', 'recovery']);
        expect(p.mfaToken.split('.')).toHaveLength(3);
        const header = JSON.parse(Buffer.from(p.mfaToken.split('.')[0]!, 'base64url').toString());
        expect(header.typ).toBe('mfa+jwt');
        const claims = JSON.parse(Buffer.from(p.mfaToken.split('.')[1]!, 'base64url').toString());
        expect(claims.exp - claims.iat).toBe(300);
        expect(claims.aud).not.toBe('postern-test');
      });

      it('a TOTP code completes the login through /auth/mfa/verify, with a refresh token only when login asked', async () => {
        const a = await signupAndLogin(ctx);
        const { secret } = await enrolTotp(ctx, a);
        const p1 = await pendingLogin(ctx, a, true);
        const s1 = await expectJson<Session>(
          await ctx.request('/auth/mfa/verify', {
            json: { token: p1.mfaToken, code: totp(secret, ctx.clock) },
          }),
          200,
        );
        expect(s1).toMatchObject({ tokenType: 'Bearer', accessToken: expect.any(String) });
        expect(s1.refreshToken).toEqual(expect.any(String));
        expect((await me(ctx, s1.accessToken)).user.mfa).toEqual({ enabled: true, methods: ['totp'] });

        ctx.clock.advance(STEP);
        const p2 = await pendingLogin(ctx, a);
        const s2 = await expectJson<Session>(
          await ctx.request('/auth/mfa/verify', {
            json: { token: p2.mfaToken, code: totp(secret, ctx.clock), methodType: 'totp' },
          }),
          200,
        );
        expect(s2.refreshToken).toBeUndefined();
      });

      it('the refresh token of an MFA login works at /auth/refresh', async () => {
        const a = await signupAndLogin(ctx);
        const { secret } = await enrolTotp(ctx, a);
        const p = await pendingLogin(ctx, a, true);
        const s = await expectJson<Session>(
          await ctx.request('/auth/mfa/verify', {
            json: { token: p.mfaToken, code: totp(secret, ctx.clock) },
          }),
          200,
        );
        await expectJson(await ctx.request('/auth/refresh', { json: { refreshToken: s.refreshToken } }), 200);
      });

      it('a pending token is single use: once it completed a login it answers 401 invalid_token', async () => {
        const a = await signupAndLogin(ctx);
        const { secret } = await enrolTotp(ctx, a);
        const p = await pendingLogin(ctx, a);
        await expectJson(
          await ctx.request('/auth/mfa/verify', {
            json: { token: p.mfaToken, code: totp(secret, ctx.clock) },
          }),
          200,
        );
        ctx.clock.advance(STEP);
        await expectPendingDead(ctx, p, secret);
      });

      it('a TOTP code works once: replaying it on a new pending login answers 401 invalid_code', async () => {
        const a = await signupAndLogin(ctx);
        const { secret } = await enrolTotp(ctx, a);
        const code = totp(secret, ctx.clock);
        const p1 = await pendingLogin(ctx, a);
        await expectJson(await ctx.request('/auth/mfa/verify', { json: { token: p1.mfaToken, code } }), 200);
        const p2 = await pendingLogin(ctx, a);
        await expectProblem(
          await ctx.request('/auth/mfa/verify', { json: { token: p2.mfaToken, code } }),
          401,
          'invalid_code',
        );
        ctx.clock.advance(STEP);
        await expectJson(
          await ctx.request('/auth/mfa/verify', {
            json: { token: p2.mfaToken, code: totp(secret, ctx.clock) },
          }),
          200,
        );
      });

      it('accepts the code of the previous and the next step, not two steps away', async () => {
        const a = await signupAndLogin(ctx);
        const { secret } = await enrolTotp(ctx, a);
        // The previous step is the one enrolment used up; move on so it is a fresh one.
        ctx.clock.advance(STEP);
        const p = await pendingLogin(ctx, a);
        for (const steps of [-2, 2]) {
          await expectProblem(
            await ctx.request('/auth/mfa/verify', {
              json: { token: p.mfaToken, code: totp(secret, ctx.clock, steps) },
            }),
            401,
            'invalid_code',
          );
        }
        await expectJson(
          await ctx.request('/auth/mfa/verify', {
            json: { token: p.mfaToken, code: totp(secret, ctx.clock, -1) },
          }),
          200,
        );
        ctx.clock.advance(3 * STEP);
        const p2 = await pendingLogin(ctx, a);
        await expectJson(
          await ctx.request('/auth/mfa/verify', {
            json: { token: p2.mfaToken, code: totp(secret, ctx.clock, 1) },
          }),
          200,
        );
      });

      it('a wrong code leaves the pending token usable', async () => {
        const a = await signupAndLogin(ctx);
        const { secret } = await enrolTotp(ctx, a);
        const p = await pendingLogin(ctx, a);
        await expectProblem(
          await ctx.request('/auth/mfa/verify', { json: { token: p.mfaToken, code: '000000' } }),
          401,
          'invalid_code',
        );
        await expectJson(
          await ctx.request('/auth/mfa/verify', {
            json: { token: p.mfaToken, code: totp(secret, ctx.clock) },
          }),
          200,
        );
      });

      it('two correct parallel verifies of one pending token give exactly one session', async () => {
        const a = await signupAndLogin(ctx);
        const { secret } = await enrolTotp(ctx, a);
        const p = await pendingLogin(ctx, a);
        const code = totp(secret, ctx.clock);
        const answers = await Promise.all(
          Array.from({ length: 4 }, () =>
            ctx.request('/auth/mfa/verify', { json: { token: p.mfaToken, code } }),
          ),
        );
        expect(answers.map((r) => r.status).sort()).toEqual([200, 401, 401, 401]);
      });

      it('eight parallel copies of the right TOTP code: one session, the others lose the token', async () => {
        const a = await signupAndLogin(ctx);
        const { secret } = await enrolTotp(ctx, a);
        const p = await pendingLogin(ctx, a);
        const code = totp(secret, ctx.clock);
        // A copy that loses is not a wrong try: counted as one, five losers would kill the
        // pending login before the winner took it, and nobody would get a session.
        await expectOneWinner(ctx, '/auth/mfa/verify', { token: p.mfaToken, code });
      });

      it('a recovery code racing a TOTP code for one pending login is not burned when TOTP wins', async () => {
        const a = await signupAndLogin(ctx);
        const { secret, recoveryCodes } = await enrolTotp(ctx, a);
        const p = await pendingLogin(ctx, a);
        const [viaTotp, viaRecovery] = await Promise.all([
          ctx.request('/auth/mfa/verify', { json: { token: p.mfaToken, code: totp(secret, ctx.clock) } }),
          ctx.request('/auth/mfa/recovery', { json: { token: p.mfaToken, code: recoveryCodes![0]! } }),
        ]);
        expect([viaTotp.status, viaRecovery.status].sort()).toEqual([200, 401]);
        ctx.clock.advance(STEP);
        const next = await pendingLogin(ctx, a);
        const reuse = await ctx.request('/auth/mfa/recovery', {
          json: { token: next.mfaToken, code: recoveryCodes![0]! },
        });
        // The code works again exactly when its own attempt lost.
        expect(reuse.status).toBe(viaRecovery.status === 200 ? 401 : 200);
      });

      it('the pending token dies 5 minutes after login', async () => {
        const a = await signupAndLogin(ctx);
        const { secret } = await enrolTotp(ctx, a);
        const p = await pendingLogin(ctx, a);
        ctx.clock.advance(5 * 60_000 + 1000);
        await expectPendingDead(ctx, p, secret);
      });

      it('methodType naming a method the user does not have answers 400 and counts nothing', async () => {
        const a = await signupAndLogin(ctx);
        const { secret } = await enrolTotp(ctx, a);
        const p = await pendingLogin(ctx, a);
        // More than the 10 per user the limiter allows: none of them counts there either.
        for (let i = 0; i < 12; i++) {
          await expectProblem(
            await ctx.request('/auth/mfa/verify', {
              json: { token: p.mfaToken, code: '123456', methodType: 'email' },
            }),
            400,
            'validation_failed',
          );
        }
        const viaEmailCodeRoute = await expectProblem(
          await ctx.request('/auth/login/email-code', { json: { token: p.mfaToken, code: '123456' } }),
          400,
          'validation_failed',
        );
        // `/auth/login/email-code` has no methodType field: the error names the field it does have.
        expect(viaEmailCodeRoute.errors?.map((e) => e.path)).toEqual(['token']);
        await expectJson(
          await ctx.request('/auth/mfa/verify', {
            json: { token: p.mfaToken, code: totp(secret, ctx.clock) },
          }),
          200,
        );
      });

      it('resend answers 409 nothing_to_resend when the login has no email method', async () => {
        const a = await signupAndLogin(ctx);
        await enrolTotp(ctx, a);
        const p = await pendingLogin(ctx, a);
        await expectProblem(
          await ctx.request('/auth/mfa/resend', { json: { token: p.mfaToken } }),
          409,
          'nothing_to_resend',
        );
        await expectProblem(
          await ctx.request('/auth/login/email-code/resend', { json: { token: p.mfaToken } }),
          409,
          'nothing_to_resend',
        );
      });

      it('removing TOTP needs the password, and with no method left login answers a session again', async () => {
        const a = await signupAndLogin(ctx);
        await enrolTotp(ctx, a);
        await expectProblem(
          await ctx.request('/auth/mfa/totp', {
            method: 'DELETE',
            json: { password: 'Wrong-Password-123' },
            bearer: a.access,
          }),
          403,
          'reauth_required',
        );
        // A fresh login is not enough here, and a missing password is a refusal, not a field error.
        await expectProblem(
          await ctx.request('/auth/mfa/totp', { method: 'DELETE', json: {}, bearer: a.access }),
          403,
          'reauth_required',
        );
        await expectProblem(
          await ctx.request('/auth/mfa/totp', { method: 'DELETE', bearer: a.access }),
          403,
          'reauth_required',
        );
        const res = await ctx.request('/auth/mfa/totp', {
          method: 'DELETE',
          json: { password: a.password },
          bearer: a.access,
        });
        expect(res.status).toBe(204);
        expect((await me(ctx, a.access)).user.mfa).toEqual({ enabled: false, methods: [] });
        const s = await expectJson<Session>(await login(ctx, a), 200);
        expect(s.accessToken).toEqual(expect.any(String));
        await expectProblem(
          await ctx.request('/auth/mfa/totp', {
            method: 'DELETE',
            json: { password: a.password },
            bearer: a.access,
          }),
          404,
          'not_found',
        );
      });

      it('a password of 128 characters outside the BMP proves fresh authentication as it logs in', async () => {
        // 128 code points, 256 UTF-16 units: a guard that the MFA routes keep counting as signup does.
        const emoji = Array.from({ length: 128 }, (_, i) => String.fromCodePoint(0x1f400 + i)).join('');
        const a = await signupAndLogin(ctx, emoji);
        await enrolTotp(ctx, a);
        const res = await ctx.request('/auth/mfa/totp', {
          method: 'DELETE',
          json: { password: a.password },
          bearer: a.access,
        });
        expect(res.status).toBe(204);
      });

      it('adding a factor mails the owner', async () => {
        const a = await signupAndLogin(ctx);
        await enrolTotp(ctx, a);
        const mail = await ctx.mail.waitFor(a.email, (m) => /added/i.test(m.subject));
        expect(mail.text).toMatch(/authenticator app/i);
      });
    });

    describe('token confusion and brute force', () => {
      it('an access token is never accepted as a pending token', async () => {
        const a = await signupAndLogin(ctx);
        await enrolTotp(ctx, a);
        for (const [path, body] of [
          ['/auth/mfa/verify', { token: a.access, code: '123456' }],
          ['/auth/login/email-code', { token: a.access, code: '123456' }],
          ['/auth/mfa/recovery', { token: a.access, code: 'AAAA-BBBB-CCCC-DDDD' }],
          ['/auth/mfa/resend', { token: a.access }],
          ['/auth/login/email-code/resend', { token: a.access }],
          ['/auth/mfa/webauthn/options', { mfaToken: a.access }],
        ] as const) {
          await expectProblem(await ctx.request(path, { json: body }), 401, 'invalid_token');
        }
      });

      it('a pending token is never accepted as an access token', async () => {
        const a = await signupAndLogin(ctx);
        await enrolTotp(ctx, a);
        const p = await pendingLogin(ctx, a);
        await expectProblem(await ctx.request('/auth/me', { bearer: p.mfaToken }), 401, 'invalid_token');
        await expectProblem(
          await ctx.request('/auth/mfa/totp/setup', { method: 'POST', bearer: p.mfaToken }),
          401,
          'invalid_token',
        );
      });

      it('a forged or garbled pending token answers 401 invalid_token', async () => {
        const a = await signupAndLogin(ctx);
        await enrolTotp(ctx, a);
        const p = await pendingLogin(ctx, a);
        const [h, c, s] = p.mfaToken.split('.') as [string, string, string];
        const claims = JSON.parse(Buffer.from(c, 'base64url').toString());
        const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, sub: randomUUID() })).toString('base64url')}.${s}`;
        const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'mfa+jwt' })).toString('base64url')}.${c}.`;
        for (const token of [forged, unsigned, 'not-a-jwt', `${p.mfaToken}x`]) {
          await expectProblem(
            await ctx.request('/auth/mfa/verify', { json: { token, code: '123456' } }),
            401,
            'invalid_token',
          );
        }
      });

      it('five wrong codes across email-code, verify, recovery and WebAuthn kill the pending token', async () => {
        const a = await signupAndLogin(ctx);
        const { secret } = await enrolTotp(ctx, a);
        await enrolEmail(ctx, a);
        const { auth } = await enrolPasskey(ctx, a);
        const p = await pendingLogin(ctx, a);
        expect(p.methods).toEqual(['webauthn', 'totp', 'email', 'recovery']);
        const wrong = [
          ['/auth/login/email-code', { token: p.mfaToken, code: '000000' }],
          ['/auth/mfa/verify', { token: p.mfaToken, code: '000001', methodType: 'totp' }],
          ['/auth/mfa/recovery', { token: p.mfaToken, code: 'AAAA-BBBB-CCCC-DDDD' }],
          ['/auth/mfa/verify', { token: p.mfaToken, code: 'ZZZZ-ZZZZ-ZZZZ-ZZZZ', methodType: 'recovery' }],
        ] as const;
        for (const [path, body] of wrong) {
          await expectProblem(await ctx.request(path, { json: body }), 401, 'invalid_code');
        }
        const o = await passkeyOptions(ctx, p.mfaToken);
        await expectProblem(
          await ctx.request('/auth/mfa/webauthn/verify', {
            json: {
              mfaToken: p.mfaToken,
              assertionResponse: auth.assert(o, { origin: 'https://evil.test' }),
            },
          }),
          401,
          'invalid_code',
        );
        await expectPendingDead(ctx, p, secret);
      });

      it('wrong email codes on /auth/login/email-code count toward the same limit', async () => {
        const a = await signupAndLogin(ctx);
        await enrolEmail(ctx, a);
        const seen = codeMails(ctx, a.email);
        const p = await pendingLogin(ctx, a);
        const code = await nextCode(ctx, a.email, seen);
        const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
        for (let i = 0; i < 5; i++) {
          await expectProblem(
            await ctx.request('/auth/login/email-code', { json: { token: p.mfaToken, code: wrong } }),
            401,
            'invalid_code',
          );
        }
        await expectProblem(
          await ctx.request('/auth/login/email-code', { json: { token: p.mfaToken, code } }),
          401,
          'invalid_token',
        );
      });

      it('a parallel burst of wrong codes over several pending logins gets no more than 10 checks', async () => {
        const a = await signupAndLogin(ctx);
        await enrolTotp(ctx, a);
        const pendings = [];
        for (let i = 0; i < 5; i++) pendings.push(await pendingLogin(ctx, a));
        const answers = await Promise.all(
          pendings.flatMap((p) =>
            ['111111', '222222', '333333', '444444'].map((code) =>
              ctx.request('/auth/mfa/verify', { json: { token: p.mfaToken, code } }),
            ),
          ),
        );
        const statuses = answers.map((r) => r.status);
        expect(statuses.filter((s) => s === 401)).toHaveLength(10);
        expect(statuses.filter((s) => s === 429)).toHaveLength(10);
      });

      it('wrong codes are throttled per user across pending logins: 429 with Retry-After', async () => {
        const a = await signupAndLogin(ctx);
        const { secret } = await enrolTotp(ctx, a);
        let throttled: Response | undefined;
        for (let i = 0; i < 4 && !throttled; i++) {
          const p = await pendingLogin(ctx, a);
          for (let j = 0; j < 4; j++) {
            const res = await ctx.request('/auth/mfa/verify', {
              json: { token: p.mfaToken, code: '999999' },
            });
            if (res.status === 429) {
              throttled = res;
              break;
            }
            await expectProblem(res, 401, 'invalid_code');
          }
        }
        expect(throttled).toBeDefined();
        await expectProblem(throttled!, 429, 'rate_limited');
        expect(Number(throttled!.headers.get('retry-after'))).toBeGreaterThan(0);
        // Even the right code waits for the window.
        const p = await pendingLogin(ctx, a);
        await expectProblem(
          await ctx.request('/auth/mfa/verify', {
            json: { token: p.mfaToken, code: totp(secret, ctx.clock) },
          }),
          429,
          'rate_limited',
        );
      });

      it('a successful MFA login does not reset the per-user count of wrong codes', async () => {
        const a = await signupAndLogin(ctx);
        const { secret } = await enrolTotp(ctx, a);
        const wrong = async (p: Pending) =>
          ctx.request('/auth/mfa/verify', { json: { token: p.mfaToken, code: '999999' } });
        // 8 wrong codes, then the owner logs in; 2 more fill the window of 10.
        for (let i = 0; i < 2; i++) {
          const p = await pendingLogin(ctx, a);
          for (let j = 0; j < 4; j++) await expectProblem(await wrong(p), 401, 'invalid_code');
        }
        ctx.clock.advance(STEP);
        const ok = await pendingLogin(ctx, a);
        await expectJson(
          await ctx.request('/auth/mfa/verify', {
            json: { token: ok.mfaToken, code: totp(secret, ctx.clock) },
          }),
          200,
        );
        const p = await pendingLogin(ctx, a);
        for (let j = 0; j < 2; j++) await expectProblem(await wrong(p), 401, 'invalid_code');
        await expectProblem(await wrong(p), 429, 'rate_limited');
      });

      it('a password reset kills the pending logins of that user', async () => {
        const a = await signupAndLogin(ctx);
        const { secret } = await enrolTotp(ctx, a);
        const p = await pendingLogin(ctx, a);
        await expectJson(await ctx.request('/auth/forgot', { json: { email: a.email } }), 202);
        const resetMail = await ctx.mail.waitFor(a.email, (m) => /reset code/i.test(m.subject));
        const resetCode = /Reset code: (\S+)/.exec(resetMail.text)![1]!;
        const r = await ctx.request('/auth/forgot-reset', {
          json: { code: resetCode, password: 'Marmalade-Comet-Lantern-9083' },
        });
        expect(r.status).toBe(204);
        await expectPendingDead(ctx, p, secret);
      });

      it('pre-hijacking: a reset that proves a never-proven address clears the factors, passkeys, recovery codes and inbox grants set up before it', async () => {
        // The attacker signs up with the victim's address (never proven) and sets the account up.
        const attacker = await signupAndLogin(ctx);
        const { secret } = await enrolTotp(ctx, attacker);
        await enrolPasskey(ctx, attacker);
        const inbox = await expectJson<{ id: string }>(
          await ctx.request('/inbox/accounts', {
            bearer: attacker.access,
            json: { address: `victim-desk-${randomUUID()}@acme.test`, name: 'Desk' },
          }),
          201,
        );
        const accomplice = await signUpAndLogIn(ctx, { email: freshEmail('accomplice') });
        await proveEmail(ctx, accomplice.email, accomplice.accessToken);
        await expectJson(
          await ctx.request(`/inbox/accounts/${inbox.id}/members`, {
            bearer: attacker.access,
            json: { email: accomplice.email, role: 'owner' },
          }),
          201,
        );
        await expectJson(
          await ctx.request(`/inbox/accounts/${inbox.id}/threads`, { bearer: accomplice.accessToken }),
          200,
        );
        const oldPending = await pendingLogin(ctx, attacker);

        // The victim cannot sign up, so takes the account back through the mailbox.
        await expectProblem(
          await ctx.request('/auth/signup', {
            json: { email: attacker.email, password: 'Saffron-Glacier-Pebble-3317', name: 'Victim' },
          }),
          409,
          'email_taken',
        );
        await expectJson(await ctx.request('/auth/forgot', { json: { email: attacker.email } }), 202);
        const resetMail = await ctx.mail.waitFor(attacker.email, (m) => /reset code/i.test(m.subject));
        const code = /Reset code: (\S+)/.exec(resetMail.text)![1]!;
        const password = 'Saffron-Glacier-Pebble-3317';
        expect((await ctx.request('/auth/forgot-reset', { json: { code, password } })).status).toBe(204);

        // The victim's login asks for no factor of the attacker's; nothing of theirs is left.
        const session = await expectJson<{ accessToken?: string; mfaRequired?: boolean }>(
          await login(ctx, { ...attacker, password }),
          200,
        );
        expect(session.mfaRequired).toBeUndefined();
        const victim = { ...attacker, password, access: session.accessToken! };
        const profile = await expectJson<{
          user: { emailVerified: boolean; mfa: { enabled: boolean; methods: string[] } };
        }>(await ctx.request('/auth/me', { bearer: victim.access }), 200);
        expect(profile.user).toMatchObject({ emailVerified: true, mfa: { enabled: false, methods: [] } });
        await expectPendingDead(ctx, oldPending, secret);
        await expectProblem(
          await ctx.request('/auth/login', { json: { email: attacker.email, password: attacker.password } }),
          401,
          'invalid_credentials',
        );
        await expectProblem(
          await ctx.request(`/inbox/accounts/${inbox.id}/threads`, { bearer: accomplice.accessToken }),
          403,
          'forbidden',
        );
        const members = await expectJson<{ members: Array<{ email: string; role: string }> }>(
          await ctx.request(`/inbox/accounts/${inbox.id}/members`, { bearer: victim.access }),
          200,
        );
        expect(members.members).toEqual([expect.objectContaining({ email: attacker.email, role: 'owner' })]);

        // The victim's own set-up afterwards is theirs: a reset of a proven address clears nothing.
        await enrolTotp(ctx, victim);
        await expectJson(await ctx.request('/auth/forgot', { json: { email: victim.email } }), 202);
        const again = await ctx.mail.waitFor(
          victim.email,
          (m) => /reset code/i.test(m.subject) && m !== resetMail,
        );
        const code2 = /Reset code: (\S+)/.exec(again.text)![1]!;
        const password2 = 'Juniper-Harbor-Quill-5521';
        expect(
          (await ctx.request('/auth/forgot-reset', { json: { code: code2, password: password2 } })).status,
        ).toBe(204);
        expect((await pendingLogin(ctx, { ...victim, password: password2 })).methods).toContain('totp');
      });

      it('a password change kills the pending logins of that user', async () => {
        const a = await signupAndLogin(ctx);
        const { secret } = await enrolTotp(ctx, a);
        const p = await pendingLogin(ctx, a);
        const r = await ctx.request('/auth/password', {
          json: { currentPassword: a.password, newPassword: 'Marmalade-Comet-Lantern-9083' },
          bearer: a.access,
        });
        expect(r.status).toBe(204);
        await expectPendingDead(ctx, p, secret);
      });

      it('bodies are strict: unknown keys, overlong codes and bad methodType answer 400', async () => {
        for (const body of [
          { token: 'x', code: '123456', extra: 1 },
          { token: 'x', code: '1'.repeat(65) },
          { token: 'x', code: '123456', methodType: 'sms' },
          { token: 'x'.repeat(4097), code: '123456' },
          { token: 'x' },
        ]) {
          await expectProblem(
            await ctx.request('/auth/mfa/verify', { json: body }),
            400,
            'validation_failed',
          );
        }
      });
    });

    describe('recovery codes', () => {
      it('a recovery code completes a login once, and its use is mailed to the owner', async () => {
        const a = await signupAndLogin(ctx);
        const { recoveryCodes } = await enrolTotp(ctx, a);
        const code = recoveryCodes![0]!;
        const p1 = await pendingLogin(ctx, a, true);
        const s = await expectJson<Session>(
          await ctx.request('/auth/mfa/recovery', { json: { token: p1.mfaToken, code } }),
          200,
        );
        expect(s.refreshToken).toEqual(expect.any(String));
        const mail = await ctx.mail.waitFor(a.email, (m) => /recovery code was used/i.test(m.subject));
        expect(mail.text).toMatch(/9 unused recovery codes remain/);
        const p2 = await pendingLogin(ctx, a);
        await expectProblem(
          await ctx.request('/auth/mfa/recovery', { json: { token: p2.mfaToken, code } }),
          401,
          'invalid_code',
        );
      });

      it('recovery codes work through /auth/mfa/verify, with or without methodType, in any case and spacing', async () => {
        const a = await signupAndLogin(ctx);
        const { recoveryCodes } = await enrolTotp(ctx, a);
        const p1 = await pendingLogin(ctx, a);
        await expectJson(
          await ctx.request('/auth/mfa/verify', {
            json: { token: p1.mfaToken, code: recoveryCodes![1]!, methodType: 'recovery' },
          }),
          200,
        );
        const p2 = await pendingLogin(ctx, a);
        const sloppy = recoveryCodes![2]!.toLowerCase().replaceAll('-', ' ');
        await expectJson(
          await ctx.request('/auth/mfa/verify', { json: { token: p2.mfaToken, code: sloppy } }),
          200,
        );
      });

      it('two parallel uses of one recovery code give exactly one session', async () => {
        const a = await signupAndLogin(ctx);
        const { recoveryCodes } = await enrolTotp(ctx, a);
        const [p1, p2] = [await pendingLogin(ctx, a), await pendingLogin(ctx, a)];
        const answers = await Promise.all(
          [p1, p2].map((p) =>
            ctx.request('/auth/mfa/recovery', { json: { token: p.mfaToken, code: recoveryCodes![3]! } }),
          ),
        );
        expect(answers.map((r) => r.status).sort()).toEqual([200, 401]);
      });

      it('regenerating needs the password, gives 10 new codes and kills the old ones', async () => {
        const a = await signupAndLogin(ctx);
        const { recoveryCodes: old } = await enrolTotp(ctx, a);
        await expectProblem(
          await ctx.request('/auth/mfa/recovery-codes', { json: {}, bearer: a.access }),
          403,
          'reauth_required',
        );
        await expectProblem(
          await ctx.request('/auth/mfa/recovery-codes', {
            json: { password: 'Wrong-Password-123' },
            bearer: a.access,
          }),
          403,
          'reauth_required',
        );
        const { recoveryCodes } = await expectJson<{ recoveryCodes: string[] }>(
          await ctx.request('/auth/mfa/recovery-codes', { json: { password: a.password }, bearer: a.access }),
          200,
        );
        expect(recoveryCodes).toHaveLength(10);
        expect(recoveryCodes.some((c) => old!.includes(c))).toBe(false);
        const p = await pendingLogin(ctx, a);
        await expectProblem(
          await ctx.request('/auth/mfa/recovery', { json: { token: p.mfaToken, code: old![0]! } }),
          401,
          'invalid_code',
        );
        await expectJson(
          await ctx.request('/auth/mfa/recovery', { json: { token: p.mfaToken, code: recoveryCodes[0]! } }),
          200,
        );
      });

      it('a second method does not hand out new recovery codes', async () => {
        const a = await signupAndLogin(ctx);
        const first = await enrolTotp(ctx, a);
        expect(first.recoveryCodes).toHaveLength(10);
        const second = await enrolEmail(ctx, a);
        expect(second.recoveryCodes).toBeUndefined();
        expect((await me(ctx, a.access)).user.mfa).toEqual({ enabled: true, methods: ['totp', 'email'] });
      });
    });

    describe('email codes', () => {
      it('enrolment mails a code; a wrong code is refused, the right one turns MFA on with recovery codes', async () => {
        const a = await signupAndLogin(ctx);
        const seen = codeMails(ctx, a.email);
        await expectJson(
          await ctx.request('/auth/mfa/email/setup', { method: 'POST', bearer: a.access }),
          202,
        );
        const code = await nextCode(ctx, a.email, seen);
        expect(code).toMatch(/^\d{6}$/);
        const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
        await expectProblem(
          await ctx.request('/auth/mfa/email/confirm', { json: { code: wrong }, bearer: a.access }),
          401,
          'invalid_code',
        );
        const ok = await expectJson<{ recoveryCodes: string[] }>(
          await ctx.request('/auth/mfa/email/confirm', { json: { code }, bearer: a.access }),
          200,
        );
        expect(ok.recoveryCodes).toHaveLength(10);
        expect((await me(ctx, a.access)).user.mfa).toEqual({ enabled: true, methods: ['email'] });
      });

      it('an enrolment confirm with no live code is refused but not counted as a wrong code', async () => {
        const a = await signupAndLogin(ctx);
        const confirm = (code: string) =>
          ctx.request('/auth/mfa/email/confirm', { json: { code }, bearer: a.access });
        for (let i = 0; i < 12; i++) await expectProblem(await confirm('123456'), 401, 'invalid_code');
        const seen = codeMails(ctx, a.email);
        await expectJson(
          await ctx.request('/auth/mfa/email/setup', { method: 'POST', bearer: a.access }),
          202,
        );
        await expectJson(await confirm(await nextCode(ctx, a.email, seen)), 200);
      });

      it('an enrolment code dies after 10 minutes', async () => {
        const a = await signupAndLogin(ctx);
        const seen = codeMails(ctx, a.email);
        await expectJson(
          await ctx.request('/auth/mfa/email/setup', {
            method: 'POST',
            json: { password: a.password },
            bearer: a.access,
          }),
          202,
        );
        const code = await nextCode(ctx, a.email, seen);
        ctx.clock.advance(10 * 60_000);
        await expectProblem(
          await ctx.request('/auth/mfa/email/confirm', {
            json: { code, password: a.password },
            bearer: a.access,
          }),
          401,
          'invalid_code',
        );
      });

      it('email setup has a cooldown of 30 seconds', async () => {
        const a = await signupAndLogin(ctx);
        await expectJson(
          await ctx.request('/auth/mfa/email/setup', { method: 'POST', bearer: a.access }),
          202,
        );
        const res = await ctx.request('/auth/mfa/email/setup', { method: 'POST', bearer: a.access });
        await expectProblem(res, 429, 'rate_limited');
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
        ctx.clock.advance(STEP);
        await expectJson(
          await ctx.request('/auth/mfa/email/setup', { method: 'POST', bearer: a.access }),
          202,
        );
      });

      it('email setup mails at most 10 codes per hour per user (the address is not proven yet)', async () => {
        const a = await signupAndLogin(ctx);
        const setup = () => ctx.request('/auth/mfa/email/setup', { method: 'POST', bearer: a.access });
        for (let i = 0; i < 10; i++) {
          await expectJson(await setup(), 202);
          ctx.clock.advance(STEP + 1000);
        }
        const capped = await setup();
        await expectProblem(capped, 429, 'rate_limited');
        expect(Number(capped.headers.get('retry-after'))).toBeGreaterThan(60);
      });

      it('when email is the only method the code is mailed at login and completes it at /auth/login/email-code', async () => {
        const a = await signupAndLogin(ctx);
        await enrolEmail(ctx, a);
        const seen = codeMails(ctx, a.email);
        const p = await pendingLogin(ctx, a, true);
        expect(p.methods).toEqual(['email', 'recovery']);
        const code = await nextCode(ctx, a.email, seen);
        const s = await expectJson<Session>(
          await ctx.request('/auth/login/email-code', { json: { token: p.mfaToken, code } }),
          200,
        );
        expect(s.refreshToken).toEqual(expect.any(String));
        // Single use: the same code on the next login is dead.
        const p2 = await pendingLogin(ctx, a);
        await expectProblem(
          await ctx.request('/auth/login/email-code', { json: { token: p2.mfaToken, code } }),
          401,
          'invalid_code',
        );
      });

      it('eight parallel copies of the right email code: one session, the others lose the token', async () => {
        const a = await signupAndLogin(ctx);
        await enrolEmail(ctx, a);
        const seen = codeMails(ctx, a.email);
        const p = await pendingLogin(ctx, a, true);
        const code = await nextCode(ctx, a.email, seen);
        // The code is checked, not used, before the attempt wins the pending login: a copy that
        // loses is not a wrong try, so five of them cannot kill the login before the winner.
        await expectOneWinner(ctx, '/auth/login/email-code', { token: p.mfaToken, code });
      });

      it('the emailed code also completes the login at /auth/mfa/verify with methodType email', async () => {
        const a = await signupAndLogin(ctx);
        await enrolEmail(ctx, a);
        const seen = codeMails(ctx, a.email);
        const p = await pendingLogin(ctx, a);
        const code = await nextCode(ctx, a.email, seen);
        await expectJson(
          await ctx.request('/auth/mfa/verify', { json: { token: p.mfaToken, code, methodType: 'email' } }),
          200,
        );
      });

      it('resend right after login mails a fresh code, kills the old one, then keeps a 30 s cooldown', async () => {
        const a = await signupAndLogin(ctx);
        await enrolEmail(ctx, a);
        const seen = codeMails(ctx, a.email);
        const p = await pendingLogin(ctx, a);
        const first = await nextCode(ctx, a.email, seen);
        expect(
          await expectJson(
            await ctx.request('/auth/login/email-code/resend', { json: { token: p.mfaToken } }),
            202,
          ),
        ).toEqual({ accepted: true });
        const second = await nextCode(ctx, a.email, seen + 1);
        const early = await ctx.request('/auth/login/email-code/resend', { json: { token: p.mfaToken } });
        await expectProblem(early, 429, 'rate_limited');
        expect(Number(early.headers.get('retry-after'))).toBeGreaterThan(0);
        if (first !== second) {
          await expectProblem(
            await ctx.request('/auth/login/email-code', { json: { token: p.mfaToken, code: first } }),
            401,
            'invalid_code',
          );
        }
        await expectJson(
          await ctx.request('/auth/login/email-code', { json: { token: p.mfaToken, code: second } }),
          200,
        );
      });

      it('resend keeps the failure count and sends at most 5 codes per pending login', async () => {
        const a = await signupAndLogin(ctx);
        await enrolEmail(ctx, a);
        const seen = codeMails(ctx, a.email);
        const p = await pendingLogin(ctx, a);
        const first = await nextCode(ctx, a.email, seen);
        const notFirst = String((Number(first) + 1) % 1_000_000).padStart(6, '0');
        for (let i = 0; i < 3; i++) {
          await expectProblem(
            await ctx.request('/auth/mfa/verify', { json: { token: p.mfaToken, code: notFirst } }),
            401,
            'invalid_code',
          );
        }
        for (let i = 0; i < 4; i++) {
          await expectJson(await ctx.request('/auth/mfa/resend', { json: { token: p.mfaToken } }), 202);
          ctx.clock.advance(STEP);
        }
        ctx.clock.advance(STEP);
        await expectProblem(
          await ctx.request('/auth/mfa/resend', { json: { token: p.mfaToken } }),
          429,
          'rate_limited',
        );
        const latest = await nextCode(ctx, a.email, seen + 4);
        const wrong = String((Number(latest) + 1) % 1_000_000).padStart(6, '0');
        await expectProblem(
          await ctx.request('/auth/mfa/verify', { json: { token: p.mfaToken, code: wrong } }),
          401,
          'invalid_code',
        );
        await expectProblem(
          await ctx.request('/auth/mfa/verify', { json: { token: p.mfaToken, code: wrong } }),
          401,
          'invalid_code',
        );
        await expectProblem(
          await ctx.request('/auth/mfa/verify', { json: { token: p.mfaToken, code: latest } }),
          401,
          'invalid_token',
        );
      });

      it('with TOTP and email, nothing is mailed at login and resend sends the first code', async () => {
        const a = await signupAndLogin(ctx);
        await enrolTotp(ctx, a);
        await enrolEmail(ctx, a);
        const seen = codeMails(ctx, a.email);
        const p = await pendingLogin(ctx, a);
        expect(p.methods).toEqual(['totp', 'email', 'recovery']);
        await new Promise((r) => setTimeout(r, 200));
        expect(codeMails(ctx, a.email)).toBe(seen);
        await expectJson(await ctx.request('/auth/mfa/resend', { json: { token: p.mfaToken } }), 202);
        const code = await nextCode(ctx, a.email, seen);
        await expectJson(await ctx.request('/auth/mfa/verify', { json: { token: p.mfaToken, code } }), 200);
      });

      it('right after a password reset the email code cannot complete a login when another factor exists', async () => {
        const a = await signupAndLogin(ctx);
        const { secret } = await enrolTotp(ctx, a);
        await enrolEmail(ctx, a);
        await expectJson(await ctx.request('/auth/forgot', { json: { email: a.email } }), 202);
        const resetMail = await ctx.mail.waitFor(a.email, (m) => /reset code/i.test(m.subject));
        const resetCode = /Reset code: (\S+)/.exec(resetMail.text)![1]!;
        const password = 'Marmalade-Comet-Lantern-9083';
        const r = await ctx.request('/auth/forgot-reset', { json: { code: resetCode, password } });
        expect(r.status).toBe(204);
        const p = await pendingLogin(ctx, { ...a, password });
        expect(p.methods).toEqual(['totp', 'recovery']);
        await expectProblem(
          await ctx.request('/auth/mfa/resend', { json: { token: p.mfaToken } }),
          409,
          'nothing_to_resend',
        );
        await expectJson(
          await ctx.request('/auth/mfa/verify', {
            json: { token: p.mfaToken, code: totp(secret, ctx.clock) },
          }),
          200,
        );
      });
    });

    describe('WebAuthn passkeys', () => {
      it('registration options pin the relying party, ask for no attestation and allow EdDSA, ES256 and RS256', async () => {
        const a = await signupAndLogin(ctx);
        const o = await expectJson<{
          challenge: string;
          rp: { id: string; name: string };
          attestation?: string;
          pubKeyCredParams: Array<{ alg: number }>;
        }>(
          await ctx.request('/auth/mfa/webauthn/register/options', { method: 'POST', bearer: a.access }),
          200,
        );
        expect(o.rp).toEqual({ id: 'postern.test', name: 'Postern test' });
        expect(o.attestation ?? 'none').toBe('none');
        expect(o.pubKeyCredParams.map((p) => p.alg)).toEqual([-8, -7, -257]);
        expect(Buffer.from(o.challenge, 'base64url')).toHaveLength(32);
      });

      it('a passkey is registered, turns MFA on with recovery codes, and completes a login', async () => {
        const a = await signupAndLogin(ctx);
        const { auth, credentialId, recoveryCodes } = await enrolPasskey(ctx, a);
        expect(credentialId).toBe(auth.id);
        expect(recoveryCodes).toHaveLength(10);
        const p = await pendingLogin(ctx, a, true);
        expect(p.methods).toEqual(['webauthn', 'recovery']);
        const o = await passkeyOptions(ctx, p.mfaToken);
        expect(o.rpId).toBe('postern.test');
        expect(o.allowCredentials.map((c) => c.id)).toEqual([auth.id]);
        const s = await expectJson<Session>(
          await ctx.request('/auth/mfa/webauthn/verify', {
            json: { mfaToken: p.mfaToken, assertionResponse: auth.assert(o) },
          }),
          200,
        );
        expect(s.refreshToken).toEqual(expect.any(String));
        expect((await me(ctx, s.accessToken)).user.mfa).toEqual({ enabled: true, methods: ['webauthn'] });
      });

      it('a tampered assertion answers 401 invalid_code and the challenge is gone after it', async () => {
        const a = await signupAndLogin(ctx);
        const { auth } = await enrolPasskey(ctx, a);
        const p = await pendingLogin(ctx, a);
        const o = await passkeyOptions(ctx, p.mfaToken);
        const good = auth.assert(o);
        const sig = Buffer.from(good.response.signature, 'base64url');
        sig[sig.length - 1]! ^= 1;
        const tampered = { ...good, response: { ...good.response, signature: sig.toString('base64url') } };
        await expectProblem(
          await ctx.request('/auth/mfa/webauthn/verify', {
            json: { mfaToken: p.mfaToken, assertionResponse: tampered },
          }),
          401,
          'invalid_code',
        );
        // Single-use challenge: even the genuine assertion now needs fresh options.
        await expectProblem(
          await ctx.request('/auth/mfa/webauthn/verify', {
            json: { mfaToken: p.mfaToken, assertionResponse: good },
          }),
          401,
          'invalid_code',
        );
        const o2 = await passkeyOptions(ctx, p.mfaToken);
        await expectJson(
          await ctx.request('/auth/mfa/webauthn/verify', {
            json: { mfaToken: p.mfaToken, assertionResponse: auth.assert(o2) },
          }),
          200,
        );
      });

      it('a replayed assertion is refused on another pending login', async () => {
        const a = await signupAndLogin(ctx);
        const { auth } = await enrolPasskey(ctx, a);
        const p1 = await pendingLogin(ctx, a);
        const assertion = auth.assert(await passkeyOptions(ctx, p1.mfaToken));
        await expectJson(
          await ctx.request('/auth/mfa/webauthn/verify', {
            json: { mfaToken: p1.mfaToken, assertionResponse: assertion },
          }),
          200,
        );
        const p2 = await pendingLogin(ctx, a);
        await passkeyOptions(ctx, p2.mfaToken);
        await expectProblem(
          await ctx.request('/auth/mfa/webauthn/verify', {
            json: { mfaToken: p2.mfaToken, assertionResponse: assertion },
          }),
          401,
          'invalid_code',
        );
      });

      it('an assertion from another origin, or with a counter going backwards, is refused', async () => {
        const a = await signupAndLogin(ctx);
        const { auth } = await enrolPasskey(ctx, a);
        const p = await pendingLogin(ctx, a);
        await expectProblem(
          await verifyPasskey(ctx, p.mfaToken, auth, {
            origin: 'https://evil.test',
          }),
          401,
          'invalid_code',
        );
        await expectJson(await verifyPasskey(ctx, p.mfaToken, auth), 200);
        const p2 = await pendingLogin(ctx, a);
        await expectProblem(await verifyPasskey(ctx, p2.mfaToken, auth, { counter: 1 }), 401, 'invalid_code');
      });

      it('a credential of another user is refused', async () => {
        const a = await signupAndLogin(ctx);
        const b = await signupAndLogin(ctx);
        await enrolPasskey(ctx, a);
        const { auth: bKey } = await enrolPasskey(ctx, b);
        const p = await pendingLogin(ctx, a);
        await expectProblem(await verifyPasskey(ctx, p.mfaToken, bKey), 401, 'invalid_code');
      });

      it('an attestation whose public key is not a point of its curve is refused, and MFA stays off', async () => {
        const a = await signupAndLogin(ctx);
        const auth = new SoftAuthenticator(ORIGIN, { offCurve: true });
        const options = await expectJson<{ challenge: string; rp: { id: string }; user: { id: string } }>(
          await ctx.request('/auth/mfa/webauthn/register/options', { method: 'POST', bearer: a.access }),
          200,
        );
        await expectProblem(
          await ctx.request('/auth/mfa/webauthn/register/verify', {
            json: { attestationResponse: auth.register(options) },
            bearer: a.access,
          }),
          401,
          'invalid_code',
        );
        expect((await me(ctx, a.access)).user.mfa).toEqual({ enabled: false, methods: [] });
      });

      it('an assertion whose user handle names another user is refused', async () => {
        const a = await signupAndLogin(ctx);
        const b = await signupAndLogin(ctx);
        const { auth } = await enrolPasskey(ctx, a);
        const bOptions = await expectJson<{ user: { id: string } }>(
          await ctx.request('/auth/mfa/webauthn/register/options', { method: 'POST', bearer: b.access }),
          200,
        );
        const p = await pendingLogin(ctx, a);
        await expectProblem(
          await verifyPasskey(ctx, p.mfaToken, auth, {
            userHandle: bOptions.user.id,
          }),
          401,
          'invalid_code',
        );
        // The user's own handle (what the authenticator stored at registration) still works.
        await expectJson(await verifyPasskey(ctx, p.mfaToken, auth), 200);
      });

      it('an attestation without fresh registration options is refused', async () => {
        const a = await signupAndLogin(ctx);
        const auth = new SoftAuthenticator(ORIGIN);
        const options = await expectJson<{ challenge: string; rp: { id: string }; user: { id: string } }>(
          await ctx.request('/auth/mfa/webauthn/register/options', { method: 'POST', bearer: a.access }),
          200,
        );
        const attestation = auth.register(options);
        await expectJson(
          await ctx.request('/auth/mfa/webauthn/register/verify', {
            json: { attestationResponse: attestation },
            bearer: a.access,
          }),
          200,
        );
        await expectProblem(
          await ctx.request('/auth/mfa/webauthn/register/verify', {
            json: { attestationResponse: attestation },
            bearer: a.access,
          }),
          401,
          'invalid_code',
        );
      });

      it('a user can hold several passkeys, list them, and delete one with the password', async () => {
        const a = await signupAndLogin(ctx);
        const first = await enrolPasskey(ctx, a);
        const second = await enrolPasskey(ctx, a);
        expect(second.recoveryCodes).toBeUndefined();
        const list = await expectJson<{ credentials: Array<{ id: string; name: string }> }>(
          await ctx.request('/auth/mfa/webauthn/credentials', { bearer: a.access }),
          200,
        );
        expect(list.credentials.map((c) => c.id)).toEqual([first.auth.id, second.auth.id]);
        const p = await pendingLogin(ctx, a);
        const o = await passkeyOptions(ctx, p.mfaToken);
        expect(o.allowCredentials.map((c) => c.id).sort()).toEqual([first.auth.id, second.auth.id].sort());
        await expectJson(
          await ctx.request('/auth/mfa/webauthn/verify', {
            json: { mfaToken: p.mfaToken, assertionResponse: second.auth.assert(o) },
          }),
          200,
        );
        const del = await ctx.request(`/auth/mfa/webauthn/credentials/${first.auth.id}`, {
          method: 'DELETE',
          json: { password: a.password },
          bearer: a.access,
        });
        expect(del.status).toBe(204);
        expect((await me(ctx, a.access)).user.mfa.methods).toEqual(['webauthn']);
        const res = await ctx.request('/auth/mfa/webauthn', {
          method: 'DELETE',
          json: { password: a.password },
          bearer: a.access,
        });
        expect(res.status).toBe(204);
        expect((await me(ctx, a.access)).user.mfa).toEqual({ enabled: false, methods: [] });
      });

      it('webauthn options for a user without passkeys answer 400', async () => {
        const a = await signupAndLogin(ctx);
        await enrolTotp(ctx, a);
        const p = await pendingLogin(ctx, a);
        await expectProblem(
          await ctx.request('/auth/mfa/webauthn/options', { json: { mfaToken: p.mfaToken } }),
          400,
          'validation_failed',
        );
      });
    });
  });

  describe('MFA completing a browser session', () => {
    const cookieSessions = { trustedOrigins: [APP_ORIGIN] };
    let ctx: HttpContext;
    beforeAll(async () => {
      ctx = await env.setup({ ...MFA_OPTIONS, cookieSessions });
    });
    afterAll(() => ctx?.close());

    /** The answer sets the refresh cookie and has no refreshToken; the cookie refreshes. */
    async function expectCookieSession(c: HttpContext, res: Response): Promise<Session> {
      const cookie = refreshCookieOf(res);
      expect(cookie.attrs).toMatchObject({ httponly: true, secure: true, samesite: 'Strict', path: '/auth' });
      const s = await expectJson<Session>(res, 200);
      expect(s.refreshToken).toBeUndefined();
      await me(c, s.accessToken);
      await expectJson(await c.request('/auth/refresh', fromPage(cookie.value)), 200);
      return s;
    }

    it("login with refreshToken 'cookie' carries the wish through TOTP (/auth/mfa/verify) and a recovery code (/auth/mfa/recovery)", async () => {
      const a = await signupAndLogin(ctx);
      const { secret, recoveryCodes } = await enrolTotp(ctx, a);
      const p = await pendingLogin(ctx, a, 'cookie');
      expect(p).not.toHaveProperty('refreshToken');
      await expectCookieSession(
        ctx,
        await ctx.request('/auth/mfa/verify', { json: { token: p.mfaToken, code: totp(secret, ctx.clock) } }),
      );
      const r = await pendingLogin(ctx, a, 'cookie');
      await expectCookieSession(
        ctx,
        await ctx.request('/auth/mfa/recovery', { json: { token: r.mfaToken, code: recoveryCodes![0] } }),
      );
    });

    it('the emailed code (/auth/login/email-code) completes a browser session', async () => {
      const a = await signupAndLogin(ctx);
      await enrolEmail(ctx, a);
      const seen = codeMails(ctx, a.email);
      const p = await pendingLogin(ctx, a, 'cookie');
      const code = await nextCode(ctx, a.email, seen);
      await expectCookieSession(
        ctx,
        await ctx.request('/auth/login/email-code', { json: { token: p.mfaToken, code } }),
      );
    });

    it('a passkey (/auth/mfa/webauthn/verify) completes a browser session', async () => {
      const a = await signupAndLogin(ctx);
      const { auth } = await enrolPasskey(ctx, a);
      const p = await pendingLogin(ctx, a, 'cookie');
      await expectCookieSession(ctx, await verifyPasskey(ctx, p.mfaToken, auth));
    });

    it('a login that asked for true still gets its refresh token in the JSON and no cookie', async () => {
      const a = await signupAndLogin(ctx);
      const { secret } = await enrolTotp(ctx, a);
      const p = await pendingLogin(ctx, a, true);
      const res = await ctx.request('/auth/mfa/verify', {
        json: { token: p.mfaToken, code: totp(secret, ctx.clock) },
      });
      expect(res.headers.getSetCookie()).toEqual([]);
      expect((await expectJson<Session>(res, 200)).refreshToken).toEqual(expect.any(String));
    });

    it('with mfa.required, the first factor enrolled at login completes a browser session', async () => {
      const req = await env.setup({
        ...MFA_OPTIONS,
        cookieSessions,
        mfa: { ...MFA_OPTIONS.mfa, required: true },
      });
      try {
        const { email } = await signUp(req, { email: freshEmail('req'), password: PASSWORD });
        const p = await pendingLogin(req, { email, password: PASSWORD, access: '' }, 'cookie');
        const setup = await expectJson<{ secret: string }>(
          await req.request('/auth/mfa/enrol/totp/setup', { json: { mfaToken: p.mfaToken } }),
          200,
        );
        const res = await req.request('/auth/mfa/enrol/totp/confirm', {
          json: { mfaToken: p.mfaToken, code: totp(setup.secret, req.clock) },
        });
        const cookie = refreshCookieOf(res);
        const s = await expectJson<Session & { recoveryCodes: string[] }>(res, 200);
        expect(s.refreshToken).toBeUndefined();
        expect(s.recoveryCodes).toHaveLength(10);
        await expectJson(await req.request('/auth/refresh', fromPage(cookie.value)), 200);
      } finally {
        await req.close();
      }
    });
  });
}
