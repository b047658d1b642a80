import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem } from '../expect.js';
import type { HttpContext } from '../harness.js';
import { expectJson, freshEmail, proveEmail, signUpAndLogIn } from '../session.js';
import {
  codeMails,
  enrolEmail,
  enrolPasskey,
  enrolTotp,
  expectPendingDead,
  login,
  nextCode,
  type Pending,
  passkeyOptions,
  pendingLogin,
  type SharedMfa,
  STEP,
  signupAndLogin,
  totp,
} from './helpers.js';

/** The pending login itself, whatever the factor: token confusion and brute force.
 *  Declared inside the `MFA` suite, on its instance. */
export function pendingLoginScenarios(mfa: SharedMfa): void {
  describe('token confusion and brute force', () => {
    let ctx: HttpContext;
    beforeAll(() => {
      ctx = mfa.ctx;
    });

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
        await expectProblem(await ctx.request('/auth/mfa/verify', { json: body }), 400, 'validation_failed');
      }
    });
  });
}
