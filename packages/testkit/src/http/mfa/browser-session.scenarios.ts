import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_ORIGIN, fromPage, refreshCookieOf } from '../browser.scenarios.js';
import type { HttpContext, HttpEnv } from '../harness.js';
import { expectJson, freshEmail, signUp } from '../session.js';
import {
  codeMails,
  enrolEmail,
  enrolPasskey,
  enrolTotp,
  MFA_OPTIONS,
  me,
  nextCode,
  PASSWORD,
  pendingLogin,
  type Session,
  signupAndLogin,
  totp,
  verifyPasskey,
} from './helpers.js';

/** Second steps that complete a browser session (the refresh cookie). */
export function browserSessionScenarios(env: HttpEnv): void {
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
