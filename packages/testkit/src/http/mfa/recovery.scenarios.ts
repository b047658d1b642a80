import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem } from '../expect.js';
import type { HttpContext } from '../harness.js';
import { expectJson } from '../session.js';
import {
  enrolEmail,
  enrolTotp,
  me,
  pendingLogin,
  type Session,
  type SharedMfa,
  signupAndLogin,
} from './helpers.js';

/** Recovery codes: logins with them, their use mailed, regeneration.
 *  Declared inside the `MFA` suite, on its instance. */
export function recoveryCodeScenarios(mfa: SharedMfa): void {
  describe('recovery codes', () => {
    let ctx: HttpContext;
    beforeAll(() => {
      ctx = mfa.ctx;
    });

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
}
