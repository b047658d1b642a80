import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem } from '../expect.js';
import type { HttpContext, HttpEnv } from '../harness.js';
import { expectJson, freshEmail, signUp } from '../session.js';
import { SoftAuthenticator } from '../soft-authenticator.js';
import {
  type Account,
  codeMails,
  MFA_OPTIONS,
  me,
  nextCode,
  ORIGIN,
  PASSWORD,
  type Pending,
  pendingLogin,
  type Session,
  STEP,
  totp,
} from './helpers.js';

/** `mfa.required`: a login without a method enrols its first one with the pending token. */
export function mfaRequiredScenarios(env: HttpEnv): void {
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
}
