import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem } from '../expect.js';
import type { HttpContext, HttpEnv } from '../harness.js';
import { expectJson } from '../session.js';
import { enrolTotp, MFA_OPTIONS, pendingLogin, signupAndLogin, totp } from './helpers.js';

/** A host that switches the email method off. */
export function emailMethodOffScenarios(env: HttpEnv): void {
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
}
