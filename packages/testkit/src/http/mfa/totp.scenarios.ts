import * as OTPAuth from 'otpauth';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem } from '../expect.js';
import type { HttpContext } from '../harness.js';
import { expectJson } from '../session.js';
import {
  enrolTotp,
  expectOneWinner,
  expectPendingDead,
  login,
  me,
  pendingLogin,
  type Session,
  type SharedMfa,
  STEP,
  signupAndLogin,
  totp,
} from './helpers.js';

/** TOTP: enrolment by a signed-in user, and logins completed with a TOTP code.
 *  Declared inside the `MFA` suite, on its instance. */
export function totpScenarios(mfa: SharedMfa): void {
  describe('TOTP enrolment', () => {
    let ctx: HttpContext;
    beforeAll(() => {
      ctx = mfa.ctx;
    });

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
      await expectJson(await ctx.request('/auth/mfa/totp/setup', { method: 'POST', bearer: a.access }), 200);
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
    let ctx: HttpContext;
    beforeAll(() => {
      ctx = mfa.ctx;
    });

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
}
