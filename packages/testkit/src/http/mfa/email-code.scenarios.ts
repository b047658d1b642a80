import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem } from '../expect.js';
import type { HttpContext } from '../harness.js';
import { expectJson } from '../session.js';
import {
  codeMails,
  enrolEmail,
  enrolTotp,
  expectOneWinner,
  me,
  nextCode,
  pendingLogin,
  type Session,
  type SharedMfa,
  STEP,
  signupAndLogin,
  totp,
} from './helpers.js';

/** The email-code factor: enrolment, login codes, resends and their limits.
 *  Declared inside the `MFA` suite, on its instance. */
export function emailCodeScenarios(mfa: SharedMfa): void {
  describe('email codes', () => {
    let ctx: HttpContext;
    beforeAll(() => {
      ctx = mfa.ctx;
    });

    it('enrolment mails a code; a wrong code is refused, the right one turns MFA on with recovery codes', async () => {
      const a = await signupAndLogin(ctx);
      const seen = codeMails(ctx, a.email);
      await expectJson(await ctx.request('/auth/mfa/email/setup', { method: 'POST', bearer: a.access }), 202);
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
      await expectJson(await ctx.request('/auth/mfa/email/setup', { method: 'POST', bearer: a.access }), 202);
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
      await expectJson(await ctx.request('/auth/mfa/email/setup', { method: 'POST', bearer: a.access }), 202);
      const res = await ctx.request('/auth/mfa/email/setup', { method: 'POST', bearer: a.access });
      await expectProblem(res, 429, 'rate_limited');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      ctx.clock.advance(STEP);
      await expectJson(await ctx.request('/auth/mfa/email/setup', { method: 'POST', bearer: a.access }), 202);
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
}
