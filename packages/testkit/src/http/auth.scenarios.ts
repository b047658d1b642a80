import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, expectSafeHeaders } from './expect.js';
import type { HttpContext, HttpEnv } from './harness.js';
import { expectJson, freshEmail, SCENARIO_PASSWORD, type SignedUp, signUp } from './session.js';

const PASSWORD = SCENARIO_PASSWORD;
const NEW_PASSWORD = 'Quiet-Harbour-Thistle-2716';
const MIN = 60_000;

interface SessionBody {
  accessToken: string;
  tokenType: string;
  expiresIn: number;
  refreshToken?: string;
}

async function login(ctx: HttpContext, a: { email: string; password: string }, refreshToken = true) {
  return expectJson<SessionBody>(
    await ctx.request('/auth/login', { json: { email: a.email, password: a.password, refreshToken } }),
    200,
  );
}

const me = (ctx: HttpContext, accessToken: string) => ctx.request('/auth/me', { bearer: accessToken });
const refresh = (ctx: HttpContext, refreshToken: string) =>
  ctx.request('/auth/refresh', { json: { refreshToken } });

/** The reset code of the newest reset mail to `email`, read from real SMTP. */
async function resetCode(ctx: HttpContext, email: string, after = 0): Promise<string> {
  const mail = await ctx.mail.waitFor(
    email,
    (m) => /reset code/i.test(m.subject) && ctx.mail.to(email).indexOf(m) >= after,
  );
  const code = /Reset code: (\S+)/.exec(mail.text)?.[1];
  expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
  return code!;
}

/** Auth routes and housekeeping: tokens, sessions, passwords, throttling, problem answers. */
export function authScenarios(env: HttpEnv): void {
  describe('auth routes', () => {
    let ctx: HttpContext;
    beforeAll(async () => {
      ctx = await env.setup();
    });
    afterAll(() => ctx?.close());

    describe('signup', () => {
      it('registers an account with the canonical email and answers 201 { user }', async () => {
        const email = freshEmail('Mixed.Case');
        const res = await ctx.request('/auth/signup', {
          json: { name: 'Ada Lovelace', email: `  ${email.toUpperCase()} `, password: PASSWORD },
        });
        const body = await expectJson<{ user: Record<string, unknown> }>(res, 201);
        expect(body.user).toEqual({
          id: expect.any(String),
          email: email.toLowerCase(),
          name: 'Ada Lovelace',
        });
        expectSafeHeaders(res);
      });

      it('takes internationalised addresses and keeps one NFC form for signup and login', async () => {
        const tag = randomUUID().slice(0, 8);
        const decomposed = `Jose\u0301-${tag}@Bu\u0308cher.example`;
        const composed = `jos\u00e9-${tag}@b\u00fccher.example`;
        const body = await expectJson<{ user: { email: string } }>(
          await ctx.request('/auth/signup', {
            json: { name: 'José', email: decomposed, password: PASSWORD },
          }),
          201,
        );
        expect(body.user.email).toBe(composed);
        await login(ctx, { email: composed, password: PASSWORD });
        // One domain whatever its spelling: IDNA (punycode) and full-width forms log in too.
        await login(ctx, { email: `jos\u00e9-${tag}@xn--bcher-kva.example`, password: PASSWORD });
        await login(ctx, {
          email: `jos\u00e9-${tag}@b\u00fccher.\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45`,
          password: PASSWORD,
        });
        await expectProblem(
          await ctx.request('/auth/signup', {
            json: { name: 'José', email: composed, password: NEW_PASSWORD },
          }),
          409,
          'email_taken',
        );
        // Lower-casing can undo NFC (`J` + U+030C -> `j` + U+030C, whose NFC is `ǰ`): both
        // spellings are one address.
        const precomposed = `\u01f0ane-${tag}@example.test`;
        await expectJson(
          await ctx.request('/auth/signup', {
            json: { name: 'Jane', email: precomposed, password: PASSWORD },
          }),
          201,
        );
        await expectProblem(
          await ctx.request('/auth/signup', {
            json: { name: 'Jane', email: `J\u030cane-${tag}@example.test`, password: NEW_PASSWORD },
          }),
          409,
          'email_taken',
        );
        await login(ctx, { email: `j\u030cane-${tag}@example.test`, password: PASSWORD });
        // Letters NFKC rewrites but keyboards type (Thai and Lao sara am, Armenian ech yiwn).
        for (const word of [
          '\u0e2a\u0e33\u0e19\u0e31\u0e01\u0e07\u0e32\u0e19',
          '\u0e84\u0eb3',
          '\u0565\u0580\u0587\u0561\u0576',
        ])
          await expectJson(
            await ctx.request('/auth/signup', {
              json: { name: 'Keyboard', email: `${word}-${tag}@example.test`, password: PASSWORD },
            }),
            201,
          );
        // An address the pattern refuses is named once.
        const once = await expectProblem(
          await ctx.request('/auth/signup', {
            json: { name: 'Bad', email: 'not-an-address', password: PASSWORD },
          }),
          400,
          'validation_failed',
        );
        expect(once.errors?.filter((e) => e.path === 'email')).toHaveLength(1);
        for (const bad of [
          '"quoted"@example.test',
          'a..b@example.test',
          'user@localhost',
          'user@127.0.0.1',
          'invisible\u200b@example.test',
          '\u0301mark-first@example.test',
          // Compatibility forms look like other accounts: `finance@`, `support@`, `admin@`.
          '\ufb01nance@example.test',
          '\u017fupport@example.test',
          '\uff41dmin@example.test',
          // Encoded words and `%` routing can deliver elsewhere ("splitting the email atom").
          '=?utf-8?q?a=40evil.example=3e?=x@example.test',
          'a%evil.example@example.test',
          // 33 characters but 66 bytes; a label of 60 characters but 68 in punycode.
          `${'\u00fc'.repeat(33)}@example.test`,
          `a@${'\u00fc'.repeat(60)}.example`,
        ])
          await expectProblem(
            await ctx.request('/auth/signup', { json: { name: 'Bad', email: bad, password: PASSWORD } }),
            400,
            'validation_failed',
          );
      });

      it('answers 409 email_taken for a registered email in any case', async () => {
        const a = await signUp(ctx);
        const res = await ctx.request('/auth/signup', {
          json: { name: 'Someone Else', email: a.email.toUpperCase(), password: NEW_PASSWORD },
        });
        await expectProblem(res, 409, 'email_taken');
      });

      it('refuses names with control or direction-override characters, lone surrogates, or nothing visible', async () => {
        for (const name of [
          'x\u0000y',
          'Ada\nLovelace',
          'x\u202eevil',
          'A\u009bB',
          '\u200b\ufeff',
          '\u2800',
          'x\udc00y',
        ]) {
          const res = await ctx.request('/auth/signup', {
            json: { name, email: freshEmail('name'), password: PASSWORD },
          });
          const p = await expectProblem(res, 400, 'validation_failed');
          expect(p.errors?.filter((e) => e.path === 'name')).toHaveLength(1);
        }
        // Right-to-left names and their marks are names.
        await expectJson(
          await ctx.request('/auth/signup', {
            json: {
              name: '\u05e9\u05e8\u05d4 \u05dc\u05d5\u05d9\u200f',
              email: freshEmail('rtl'),
              password: PASSWORD,
            },
          }),
          201,
        );
      });

      it('refuses weak, short and overlong passwords with 400 validation_failed on password', async () => {
        for (const password of [
          'password1',
          'Abc12!x',
          'x'.repeat(129),
          'qwertyuiop123',
          // The same weak passwords in other spellings: full-width, mathematical bold, Cyrillic
          // look-alikes, a zero-width space, and Russian typed on the same keys.
          '\uff50\uff41\uff53\uff53\uff57\uff4f\uff52\uff44\uff11\uff12\uff13',
          '\u{1d429}\u{1d41a}\u{1d42c}\u{1d42c}\u{1d430}\u{1d428}\u{1d42b}\u{1d41d}123',
          'p\u0430ssw\u043erd123',
          'pass\u200bword123',
          '\u043f\u0430\u0440\u043e\u043b\u044c123',
          '\u0439\u0446\u0443\u043a\u0435\u043d\u0433\u0448\u0449\u0437',
        ]) {
          const res = await ctx.request('/auth/signup', {
            json: { name: 'Weak', email: freshEmail('auth'), password },
          });
          const p = await expectProblem(res, 400, 'validation_failed');
          expect(p.errors?.some((e) => e.path === 'password')).toBe(true);
        }
      });

      it('refuses a password built from the account email and name', async () => {
        const res = await ctx.request('/auth/signup', {
          json: {
            name: 'Zebulon Quartermaine',
            email: 'zebulon.quartermaine@example.test',
            password: 'ZebulonQuartermaine',
          },
        });
        await expectProblem(res, 400, 'validation_failed');
      });

      it('refuses unknown fields, wrong types, bad emails and overlong names', async () => {
        const bodies = [
          { name: 'X', email: freshEmail('auth'), password: PASSWORD, admin: true },
          { name: 'X', email: freshEmail('auth'), password: 12345678 },
          { name: 'X', email: 'not-an-email', password: PASSWORD },
          { name: 'x'.repeat(201), email: freshEmail('auth'), password: PASSWORD },
          { name: 'X', email: `${'a'.repeat(250)}@example.test`, password: PASSWORD },
          { email: freshEmail('auth'), password: PASSWORD },
        ];
        for (const b of bodies) {
          const p = await expectProblem(
            await ctx.request('/auth/signup', { json: b }),
            400,
            'validation_failed',
          );
          expect(p.errors?.length).toBeGreaterThan(0);
        }
      });
    });

    describe('login, me, roles', () => {
      it('answers a session without a refresh token unless asked for one', async () => {
        const a = await signUp(ctx);
        const plain = await login(ctx, a, false);
        expect(plain).toEqual({ accessToken: expect.any(String), tokenType: 'Bearer', expiresIn: 900 });
        const withRefresh = await login(ctx, a, true);
        expect(withRefresh.refreshToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
      });

      it('accepts the email in any case and with surrounding spaces', async () => {
        const a = await signUp(ctx);
        await login(ctx, { email: ` ${a.email.toUpperCase()} `, password: a.password });
      });

      it('answers one identical 401 invalid_credentials for a wrong password and an unknown email', async () => {
        const a = await signUp(ctx);
        const wrong = await ctx.request('/auth/login', {
          json: { email: a.email, password: `${a.password}x` },
        });
        const unknown = await ctx.request('/auth/login', {
          json: { email: freshEmail('auth'), password: a.password },
        });
        const p1 = await expectProblem(wrong, 401, 'invalid_credentials');
        const p2 = await expectProblem(unknown, 401, 'invalid_credentials');
        expect(p1).toEqual(p2);
      });

      it('hashes the password exactly as sent: no trimming', async () => {
        const a = await signUp(ctx);
        const res = await ctx.request('/auth/login', {
          json: { email: a.email, password: ` ${a.password} ` },
        });
        await expectProblem(res, 401, 'invalid_credentials');
      });

      it('returns the user on GET /auth/me and the roles on GET /auth/roles', async () => {
        const a = await signUp(ctx, { name: 'Grace Hopper' });
        const s = await login(ctx, a);
        const body = await expectJson<{ user: Record<string, unknown> }>(await me(ctx, s.accessToken), 200);
        expect(body.user).toEqual({
          id: a.id,
          email: a.email,
          name: 'Grace Hopper',
          roles: ['user'],
          emailVerified: false,
          mfa: { enabled: false, methods: [] },
        });
        expect(await expectJson(await ctx.request('/auth/roles', { bearer: s.accessToken }), 200)).toEqual({
          roles: ['user'],
        });
      });

      it('refuses missing, malformed, tampered and expired access tokens with 401 invalid_token', async () => {
        const a = await signUp(ctx);
        const s = await login(ctx, a);
        // RFC 6750 3.1: a challenge, naming the error only when a token was sent.
        const anonymous = await ctx.request('/auth/me');
        await expectProblem(anonymous, 401, 'invalid_token');
        expect(anonymous.headers.get('www-authenticate')).toBe('Bearer');
        const malformed = await me(ctx, 'not.a.jwt');
        await expectProblem(malformed, 401, 'invalid_token');
        expect(malformed.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
        const [h, p, sig] = s.accessToken.split('.');
        const claims = JSON.parse(Buffer.from(p!, 'base64url').toString()) as Record<string, unknown>;
        const forged = Buffer.from(JSON.stringify({ ...claims, sub: randomUUID() })).toString('base64url');
        await expectProblem(await me(ctx, `${h}.${forged}.${sig}`), 401, 'invalid_token');
        const none = Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url');
        await expectProblem(await me(ctx, `${none}.${p}.`), 401, 'invalid_token');
        await expectProblem(
          await ctx.request('/auth/me', { headers: { authorization: `Basic ${s.accessToken}` } }),
          401,
          'invalid_token',
        );
        // A refresh token is not an access token.
        await expectProblem(await me(ctx, s.refreshToken!), 401, 'invalid_token');
      });

      it('refuses an access token once it has expired (15 minutes)', async () => {
        const a = await signUp(ctx);
        const s = await login(ctx, a);
        await expectJson(await me(ctx, s.accessToken), 200);
        ctx.clock.advance(15 * MIN + 31_000);
        await expectProblem(await me(ctx, s.accessToken), 401, 'invalid_token');
      });
    });

    describe('refresh and logout', () => {
      it('rotates: every refresh answers a new pair and the new refresh token works', async () => {
        const a = await signUp(ctx);
        const s = await login(ctx, a);
        const r1 = await expectJson<SessionBody>(await refresh(ctx, s.refreshToken!), 200);
        expect(r1).toMatchObject({ tokenType: 'Bearer', expiresIn: 900 });
        expect(r1.refreshToken).toBeDefined();
        expect(r1.refreshToken).not.toBe(s.refreshToken);
        expect(r1.accessToken).not.toBe(s.accessToken);
        const r2 = await expectJson<SessionBody>(await refresh(ctx, r1.refreshToken!), 200);
        await expectJson(await me(ctx, r2.accessToken), 200);
      });

      it('detects reuse: an already-rotated token answers 401 and ends the whole family', async () => {
        const a = await signUp(ctx);
        const s = await login(ctx, a);
        const r1 = await expectJson<SessionBody>(await refresh(ctx, s.refreshToken!), 200);
        await expectProblem(await refresh(ctx, s.refreshToken!), 401, 'invalid_token');
        await expectProblem(await refresh(ctx, r1.refreshToken!), 401, 'invalid_token');
        await expectProblem(await me(ctx, r1.accessToken), 401, 'invalid_token');
        await expectProblem(await me(ctx, s.accessToken), 401, 'invalid_token');
      });

      it('lets exactly one of many concurrent refreshes with one token win (strict mode)', async () => {
        const a = await signUp(ctx);
        const s = await login(ctx, a);
        const answers = await Promise.all(Array.from({ length: 8 }, () => refresh(ctx, s.refreshToken!)));
        const statuses = answers.map((r) => r.status);
        expect(statuses.filter((x) => x === 200)).toHaveLength(1);
        expect(statuses.filter((x) => x === 401)).toHaveLength(7);
        // The losers presented a rotated token: the family is gone, winner included.
        const winner = (await answers[statuses.indexOf(200)]!.json()) as SessionBody;
        await expectProblem(await refresh(ctx, winner.refreshToken!), 401, 'invalid_token');
        await expectProblem(await me(ctx, winner.accessToken), 401, 'invalid_token');
      });

      it('refuses unknown, malformed and empty refresh tokens', async () => {
        await expectProblem(await refresh(ctx, 'A'.repeat(43)), 401, 'invalid_token');
        await expectProblem(
          await ctx.request('/auth/refresh', { json: { refreshToken: '' } }),
          400,
          'validation_failed',
        );
        await expectProblem(await ctx.request('/auth/refresh', { json: {} }), 400, 'validation_failed');
      });

      it('logout answers 204 and ends the session: refresh and access tokens die at once', async () => {
        const a = await signUp(ctx);
        const s = await login(ctx, a);
        const other = await login(ctx, a);
        await expectJson(await me(ctx, s.accessToken), 200);
        const res = await ctx.request('/auth/logout', { json: { refreshToken: s.refreshToken } });
        expect(res.status).toBe(204);
        expect(await res.text()).toBe('');
        await expectProblem(await me(ctx, s.accessToken), 401, 'invalid_token');
        await expectProblem(await refresh(ctx, s.refreshToken!), 401, 'invalid_token');
        // Another session of the same user lives on.
        await expectJson(await me(ctx, other.accessToken), 200);
        // Logging out again is harmless.
        expect((await ctx.request('/auth/logout', { json: { refreshToken: s.refreshToken } })).status).toBe(
          204,
        );
      });
    });

    describe('forgot and forgot-reset', () => {
      it('answers the same 202 { accepted: true } for known and unknown emails; only the known one gets mail', async () => {
        const a = await signUp(ctx);
        const unknown = freshEmail('nobody');
        const r1 = await ctx.request('/auth/forgot', { json: { email: a.email } });
        const r2 = await ctx.request('/auth/forgot', { json: { email: unknown } });
        expect([r1.status, r2.status]).toEqual([202, 202]);
        const [b1, b2] = [await r1.text(), await r2.text()];
        expect(JSON.parse(b1)).toEqual({ accepted: true });
        expect(b2).toBe(b1);
        const headers = (r: Response) => [...r.headers].filter(([k]) => k !== 'date').sort();
        expect(headers(r2)).toEqual(headers(r1));
        await resetCode(ctx, a.email);
        expect(ctx.mail.to(unknown)).toEqual([]);
      });

      it('resets the password with the code from the mail, ends every session and mails the owner', async () => {
        const a = await signUp(ctx);
        const s = await login(ctx, a);
        await expectJson(await ctx.request('/auth/forgot', { json: { email: a.email } }), 202);
        const code = await resetCode(ctx, a.email);
        const res = await ctx.request('/auth/forgot-reset', { json: { code, password: NEW_PASSWORD } });
        expect(res.status).toBe(204);
        await expectProblem(await me(ctx, s.accessToken), 401, 'invalid_token');
        await expectProblem(await refresh(ctx, s.refreshToken!), 401, 'invalid_token');
        await expectProblem(
          await ctx.request('/auth/login', { json: { email: a.email, password: PASSWORD } }),
          401,
          'invalid_credentials',
        );
        const fresh = await login(ctx, { email: a.email, password: NEW_PASSWORD }, false);
        expect(fresh.refreshToken).toBeUndefined();
        const changed = await ctx.mail.waitFor(a.email, (m) => /password was changed/i.test(m.subject));
        expect(changed.text).not.toContain(code);
        // The code worked once.
        await expectProblem(
          await ctx.request('/auth/forgot-reset', { json: { code, password: PASSWORD } }),
          401,
          'invalid_code',
        );
      });

      it('a newer code voids the older one', async () => {
        const a = await signUp(ctx);
        await expectJson(await ctx.request('/auth/forgot', { json: { email: a.email } }), 202);
        const first = await resetCode(ctx, a.email);
        await expectJson(await ctx.request('/auth/forgot', { json: { email: a.email } }), 202);
        const second = await resetCode(ctx, a.email, 1);
        expect(second).not.toBe(first);
        await expectProblem(
          await ctx.request('/auth/forgot-reset', { json: { code: first, password: NEW_PASSWORD } }),
          401,
          'invalid_code',
        );
        expect(
          (await ctx.request('/auth/forgot-reset', { json: { code: second, password: NEW_PASSWORD } }))
            .status,
        ).toBe(204);
      });

      it('refuses unknown and expired codes with 401 invalid_code, weak passwords with 400', async () => {
        const a = await signUp(ctx);
        await expectProblem(
          await ctx.request('/auth/forgot-reset', { json: { code: 'A'.repeat(43), password: NEW_PASSWORD } }),
          401,
          'invalid_code',
        );
        // Under 8 characters is a field error of the body, whatever the code.
        const short = await expectProblem(
          await ctx.request('/auth/forgot-reset', { json: { code: 'A'.repeat(43), password: 'Ab3$xyz' } }),
          400,
          'validation_failed',
        );
        expect(short.errors).toEqual([{ path: 'password', message: 'Use at least 8 characters' }]);
        await expectJson(await ctx.request('/auth/forgot', { json: { email: a.email } }), 202);
        const code = await resetCode(ctx, a.email);
        await expectProblem(
          await ctx.request('/auth/forgot-reset', { json: { code, password: 'password123' } }),
          400,
          'validation_failed',
        );
        ctx.clock.advance(30 * MIN);
        await expectProblem(
          await ctx.request('/auth/forgot-reset', { json: { code, password: NEW_PASSWORD } }),
          401,
          'invalid_code',
        );
        await expectProblem(
          await ctx.request('/auth/forgot', { json: { email: 'nope' } }),
          400,
          'validation_failed',
        );
      });
    });

    describe('email verification', () => {
      const CONFIRM = 'Confirm your email address';
      const verifyMails = (a: SignedUp) => ctx.mail.to(a.email).filter((m) => m.subject === CONFIRM);
      async function verifyCode(a: SignedUp, seen: number): Promise<string> {
        await ctx.mail.waitFor(a.email, () => verifyMails(a).length > seen);
        const code = /\b(\d{6})\b/.exec(verifyMails(a)[seen]!.text)?.[1];
        expect(code).toMatch(/^\d{6}$/);
        return code!;
      }
      const send = (access: string) =>
        ctx.request('/auth/verify-email/send', { method: 'POST', bearer: access });
      const verify = (access: string, code: string) =>
        ctx.request('/auth/verify-email', { json: { code }, bearer: access });

      it('mails a code; a wrong one is 401 invalid_code, the right one sets emailVerified and works once', async () => {
        const a = await signUp(ctx);
        const s = await login(ctx, a);
        const before = await expectJson<{ user: { emailVerified: boolean } }>(
          await me(ctx, s.accessToken),
          200,
        );
        expect(before.user.emailVerified).toBe(false);
        expect(await expectJson(await send(s.accessToken), 202)).toEqual({ accepted: true });
        const code = await verifyCode(a, 0);
        const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
        await expectProblem(await verify(s.accessToken, wrong), 401, 'invalid_code');
        await expectProblem(await verify(s.accessToken, 'abc'), 401, 'invalid_code');
        const done = await expectJson<{ user: { id: string; emailVerified: boolean } }>(
          await verify(s.accessToken, code),
          200,
        );
        expect(done.user).toMatchObject({ id: a.id, email: a.email, emailVerified: true });
        expect((await expectJson<typeof done>(await me(ctx, s.accessToken), 200)).user.emailVerified).toBe(
          true,
        );
        // Proven: a repeat answers the user again, a new send has nothing to do.
        await expectJson(await verify(s.accessToken, code), 200);
        await expectProblem(await send(s.accessToken), 409, 'nothing_to_resend');
      });

      it('needs a Bearer token; a code is bound to its user; a new send replaces the last code', async () => {
        await expectProblem(
          await ctx.request('/auth/verify-email/send', { method: 'POST' }),
          401,
          'invalid_token',
        );
        await expectProblem(
          await ctx.request('/auth/verify-email', { json: { code: '123456' } }),
          401,
          'invalid_token',
        );
        const a = await signUp(ctx);
        const b = await signUp(ctx);
        const sa = await login(ctx, a);
        const sb = await login(ctx, b);
        await expectJson(await send(sa.accessToken), 202);
        const first = await verifyCode(a, 0);
        await expectProblem(await verify(sb.accessToken, first), 401, 'invalid_code');
        ctx.clock.advance(31_000);
        await expectJson(await send(sa.accessToken), 202);
        const second = await verifyCode(a, 1);
        if (second !== first) await expectProblem(await verify(sa.accessToken, first), 401, 'invalid_code');
        await expectJson(await verify(sa.accessToken, second), 200);
      });

      it('one send per 30 s and 10 per hour per user (429 with Retry-After); a code dies after 10 minutes', async () => {
        const a = await signUp(ctx);
        const s = await login(ctx, a);
        await expectJson(await send(s.accessToken), 202);
        const code = await verifyCode(a, 0);
        const soon = await send(s.accessToken);
        await expectProblem(soon, 429, 'rate_limited');
        expect(Number(soon.headers.get('retry-after'))).toBeGreaterThan(0);
        ctx.clock.advance(10 * MIN);
        await expectProblem(await verify(s.accessToken, code), 401, 'invalid_code');
        // The access token lives 15 minutes: log in again as time moves on.
        let access = s.accessToken;
        for (let i = 1; i < 10; i++) {
          ctx.clock.advance(31_000);
          if (i % 5 === 0) access = (await login(ctx, a)).accessToken;
          await expectJson(await send(access), 202);
        }
        ctx.clock.advance(31_000);
        const capped = await send(access);
        await expectProblem(capped, 429, 'rate_limited');
        expect(Number(capped.headers.get('retry-after'))).toBeGreaterThan(60);
        await ctx.mail.waitFor(a.email, () => verifyMails(a).length === 10);
        expect(verifyMails(a)).toHaveLength(10);
      });

      it('10 wrong codes per user and day, then 429; a guess with no live code is not counted', async () => {
        const a = await signUp(ctx);
        const s = await login(ctx, a);
        // No code was sent yet: nothing to guess, nothing counted.
        for (let i = 0; i < 12; i++)
          await expectProblem(await verify(s.accessToken, '000000'), 401, 'invalid_code');
        await expectJson(await send(s.accessToken), 202);
        const code = await verifyCode(a, 0);
        const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
        for (let i = 0; i < 10; i++)
          await expectProblem(await verify(s.accessToken, wrong), 401, 'invalid_code');
        await expectProblem(await verify(s.accessToken, code), 429, 'rate_limited');
        // A day, not 15 minutes: a stranger's account can ask for fresh codes all day long.
        ctx.clock.advance(60 * MIN);
        const later = (await login(ctx, a)).accessToken;
        await expectProblem(await verify(later, code), 429, 'rate_limited');
        // MFA codes have their own budget.
        await expectJson(await ctx.request('/auth/mfa/totp/setup', { method: 'POST', bearer: later }), 200);
        await expectProblem(
          await ctx.request('/auth/mfa/totp/confirm', { json: { code: '000000' }, bearer: later }),
          401,
          'invalid_code',
        );
      });

      it('email MFA enrolment proves the address only within the daily budget, and is never locked out by it', async () => {
        const a = await signUp(ctx);
        const s = await login(ctx, a);
        await expectJson(await send(s.accessToken), 202);
        const code = await verifyCode(a, 0);
        const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
        for (let i = 0; i < 10; i++)
          await expectProblem(await verify(s.accessToken, wrong), 401, 'invalid_code');
        ctx.clock.advance(31_000);
        await expectJson(
          await ctx.request('/auth/mfa/email/setup', { method: 'POST', bearer: s.accessToken }),
          202,
        );
        const enrolMail = await ctx.mail.waitFor(a.email, (m) => m.subject === 'Your sign-in code');
        const enrolCode = /\b(\d{6})\b/.exec(enrolMail.text)![1]!;
        // The MFA code limits alone apply: the enrolment itself goes through...
        await expectJson(
          await ctx.request('/auth/mfa/email/confirm', { json: { code: enrolCode }, bearer: s.accessToken }),
          200,
        );
        // ...but with the day's verification guesses spent, it does not prove the address.
        const after = await expectJson<{ user: { emailVerified: boolean; mfa: { methods: string[] } } }>(
          await me(ctx, s.accessToken),
          200,
        );
        expect(after.user).toMatchObject({ emailVerified: false, mfa: { methods: ['email'] } });
      });

      it('parallel copies of the right code all succeed or lose the code, and none is counted as wrong', async () => {
        const a = await signUp(ctx);
        const s = await login(ctx, a);
        await expectJson(await send(s.accessToken), 202);
        const code = await verifyCode(a, 0);
        const answers = await Promise.all(Array.from({ length: 8 }, () => verify(s.accessToken, code)));
        const statuses = answers.map((r) => r.status);
        expect(statuses).toContain(200);
        expect(statuses).not.toContain(429);
        for (const r of answers.filter((x) => x.status !== 200)) await expectProblem(r, 401, 'invalid_code');
        // The losers gave their points back: the day's 10 wrong tries are all still there (an
        // email change uses the same budget).
        const next = freshEmail('after-race');
        await expectJson(
          await ctx.request('/auth/email', {
            json: { newEmail: next, password: a.password },
            bearer: s.accessToken,
          }),
          202,
        );
        const sent = await ctx.mail.waitFor(next, (m) => m.subject === 'Confirm your new email address');
        const right = /\b(\d{6})\b/.exec(sent.text)![1]!;
        const wrong = String((Number(right) + 1) % 1_000_000).padStart(6, '0');
        const confirm = (c: string) =>
          ctx.request('/auth/email/confirm', { json: { newEmail: next, code: c }, bearer: s.accessToken });
        for (let i = 0; i < 10; i++) await expectProblem(await confirm(wrong), 401, 'invalid_code');
        await expectProblem(await confirm(right), 429, 'rate_limited');
      });

      it('the send route takes no body: unknown fields and malformed JSON are refused', async () => {
        const a = await signUp(ctx);
        const s = await login(ctx, a);
        await expectProblem(
          await ctx.request('/auth/verify-email/send', { json: { x: 1 }, bearer: s.accessToken }),
          400,
          'validation_failed',
        );
        await expectProblem(
          await ctx.request('/auth/verify-email/send', {
            method: 'POST',
            body: '{',
            headers: { 'content-type': 'application/json' },
            bearer: s.accessToken,
          }),
          400,
          'invalid_json',
        );
        expect(ctx.mail.to(a.email)).toEqual([]);
        await expectJson(
          await ctx.request('/auth/verify-email/send', { json: {}, bearer: s.accessToken }),
          202,
        );
      });
    });

    describe('email change', () => {
      const NEW_SUBJECT = 'Confirm your new email address';
      async function changeCode(to: string, seen = 0): Promise<string> {
        const mails = () => ctx.mail.to(to).filter((m) => m.subject === NEW_SUBJECT);
        await ctx.mail.waitFor(to, () => mails().length > seen);
        return /\b(\d{6})\b/.exec(mails()[seen]!.text)![1]!;
      }
      const request = (access: string, body: Record<string, unknown>) =>
        ctx.request('/auth/email', { json: body, bearer: access });
      const confirm = (access: string, newEmail: string, code: string) =>
        ctx.request('/auth/email/confirm', { json: { newEmail, code }, bearer: access });

      it('mails a code to the new address; the code switches login, lookup and reset to it and tells the old one', async () => {
        const a = await signUp(ctx);
        const s = await login(ctx, a);
        // A reset code mailed to the old address dies with the change.
        await expectJson(await ctx.request('/auth/forgot', { json: { email: a.email } }), 202);
        const oldReset = await resetCode(ctx, a.email);
        const next = freshEmail('Moved');
        const canonical = next.toLowerCase();
        expect(
          await expectJson(await request(s.accessToken, { newEmail: next, password: a.password }), 202),
        ).toEqual({
          accepted: true,
        });
        const code = await changeCode(canonical);
        const done = await expectJson<{ user: { id: string; email: string; emailVerified: boolean } }>(
          await confirm(s.accessToken, next, code),
          200,
        );
        expect(done.user).toMatchObject({ id: a.id, email: canonical, emailVerified: true });
        await ctx.mail.waitFor(a.email, (m) => m.subject === 'Your email address was changed');
        expect(ctx.mail.to(a.email).at(-1)!.text).not.toContain(canonical);
        await expectProblem(
          await ctx.request('/auth/login', { json: { email: a.email, password: a.password } }),
          401,
          'invalid_credentials',
        );
        await login(ctx, { email: canonical, password: a.password });
        await expectProblem(
          await ctx.request('/auth/forgot-reset', { json: { code: oldReset, password: NEW_PASSWORD } }),
          401,
          'invalid_code',
        );
        // A repeat (a double submit) answers the same user and changes nothing twice; the old
        // address is free for a new account.
        await expectJson(await confirm(s.accessToken, next, code), 200);
        expect(
          ctx.mail.to(a.email).filter((m) => m.subject === 'Your email address was changed'),
        ).toHaveLength(1);
        await signUp(ctx, { email: a.email });
      });

      it('needs the password (403 reauth_required without it or with a wrong one), refuses taken and same addresses, and limits the lookups', async () => {
        const a = await signUp(ctx);
        const b = await signUp(ctx);
        const s = await login(ctx, a);
        const next = freshEmail('next');
        await expectProblem(await request(s.accessToken, { newEmail: next }), 403, 'reauth_required');
        await expectProblem(
          await request(s.accessToken, { newEmail: next, password: 'Wrong-Password-000' }),
          403,
          'reauth_required',
        );
        await expectProblem(
          await request(s.accessToken, { newEmail: b.email, password: a.password }),
          409,
          'email_taken',
        );
        const same = await expectProblem(
          await request(s.accessToken, { newEmail: a.email.toUpperCase(), password: a.password }),
          400,
          'validation_failed',
        );
        expect(same.errors?.[0]?.path).toBe('newEmail');
        // The 409 cost a send: asking again within 30 s is refused before the lookup.
        await expectProblem(
          await request(s.accessToken, { newEmail: b.email, password: a.password }),
          429,
          'rate_limited',
        );
        await expectProblem(
          await request(s.accessToken, { newEmail: 'nope', password: a.password }),
          400,
          'validation_failed',
        );
        await expectProblem(
          await ctx.request('/auth/email', { json: { newEmail: next, password: a.password } }),
          401,
          'invalid_token',
        );
        expect(ctx.mail.to(next)).toEqual([]);
      });

      it('the code proves only the address it was mailed to; a newer request replaces it', async () => {
        const a = await signUp(ctx);
        const s = await login(ctx, a);
        const first = freshEmail('first');
        const second = freshEmail('second');
        await expectJson(await request(s.accessToken, { newEmail: first, password: a.password }), 202);
        const code1 = await changeCode(first);
        await expectProblem(await confirm(s.accessToken, second, code1), 401, 'invalid_code');
        ctx.clock.advance(31_000);
        await expectJson(await request(s.accessToken, { newEmail: second, password: a.password }), 202);
        const code2 = await changeCode(second);
        await expectProblem(await confirm(s.accessToken, first, code1), 401, 'invalid_code');
        await expectJson(await confirm(s.accessToken, second, code2), 200);
      });

      it('answers 409 email_taken when the address was registered between request and confirm', async () => {
        const a = await signUp(ctx);
        const s = await login(ctx, a);
        const next = freshEmail('raced');
        await expectJson(await request(s.accessToken, { newEmail: next, password: a.password }), 202);
        const code = await changeCode(next);
        await signUp(ctx, { email: next });
        await expectProblem(await confirm(s.accessToken, next, code), 409, 'email_taken');
        await login(ctx, a);
      });
    });

    describe('password change and sessions (housekeeping)', () => {
      it('POST /auth/password changes the password, ends the other sessions and mails the owner', async () => {
        const a = await signUp(ctx);
        const mine = await login(ctx, a);
        const other = await login(ctx, a);
        const res = await ctx.request('/auth/password', {
          json: { currentPassword: PASSWORD, newPassword: NEW_PASSWORD },
          bearer: mine.accessToken,
        });
        expect(res.status).toBe(204);
        await expectJson(await me(ctx, mine.accessToken), 200);
        await expectProblem(await me(ctx, other.accessToken), 401, 'invalid_token');
        await expectProblem(await refresh(ctx, other.refreshToken!), 401, 'invalid_token');
        await expectJson(await refresh(ctx, mine.refreshToken!), 200);
        await login(ctx, { email: a.email, password: NEW_PASSWORD });
        await ctx.mail.waitFor(a.email, (m) => /password was changed/i.test(m.subject));
      });

      it('POST /auth/password refuses a wrong current password with 401 invalid_credentials', async () => {
        const a = await signUp(ctx);
        const s = await login(ctx, a);
        const res = await ctx.request('/auth/password', {
          json: { currentPassword: NEW_PASSWORD, newPassword: NEW_PASSWORD },
          bearer: s.accessToken,
        });
        await expectProblem(res, 401, 'invalid_credentials');
        await expectProblem(
          await ctx.request('/auth/password', {
            json: { currentPassword: PASSWORD, newPassword: NEW_PASSWORD },
          }),
          401,
          'invalid_token',
        );
      });

      it('POST /auth/password names newPassword when the new password is too weak', async () => {
        const a = await signUp(ctx);
        const s = await login(ctx, a);
        for (const newPassword of ['short', 'password']) {
          const problem = await expectProblem(
            await ctx.request('/auth/password', {
              json: { currentPassword: PASSWORD, newPassword },
              bearer: s.accessToken,
            }),
            400,
            'validation_failed',
          );
          expect(problem.errors).toEqual([{ path: 'newPassword', message: expect.any(String) }]);
        }
        // Under 8 characters is a field error of the body, even with a wrong current password.
        const short = await expectProblem(
          await ctx.request('/auth/password', {
            json: { currentPassword: NEW_PASSWORD, newPassword: 'Ab3$xyz' },
            bearer: s.accessToken,
          }),
          400,
          'validation_failed',
        );
        expect(short.errors).toEqual([{ path: 'newPassword', message: 'Use at least 8 characters' }]);
        await login(ctx, a);
      });

      it('GET /auth/sessions lists the own live sessions and marks the current one', async () => {
        const a = await signUp(ctx);
        const s1 = await login(ctx, a);
        const s2 = await login(ctx, a);
        const body = await expectJson<{ sessions: Array<{ id: string; current: boolean }> }>(
          await ctx.request('/auth/sessions', { bearer: s2.accessToken }),
          200,
        );
        expect(body.sessions).toHaveLength(2);
        expect(body.sessions.filter((x) => x.current)).toHaveLength(1);
        expect(body.sessions[0]).toMatchObject({
          id: expect.any(String),
          createdAt: expect.any(String),
          lastUsedAt: expect.any(String),
          expiresAt: expect.any(String),
        });
        await expectJson(await me(ctx, s1.accessToken), 200);
      });

      it('DELETE /auth/sessions/{id} ends an own session at once; another user gets 404', async () => {
        const a = await signUp(ctx);
        const b = await signUp(ctx);
        const sa = await login(ctx, a);
        const sa2 = await login(ctx, a);
        const sb = await login(ctx, b);
        const list = await expectJson<{ sessions: Array<{ id: string; current: boolean }> }>(
          await ctx.request('/auth/sessions', { bearer: sa.accessToken }),
          200,
        );
        const target = list.sessions.find((x) => !x.current)!.id;
        await expectProblem(
          await ctx.request(`/auth/sessions/${target}`, { method: 'DELETE', bearer: sb.accessToken }),
          404,
          'not_found',
        );
        await expectJson(await me(ctx, sa2.accessToken), 200);
        const res = await ctx.request(`/auth/sessions/${target}`, {
          method: 'DELETE',
          bearer: sa.accessToken,
        });
        expect(res.status).toBe(204);
        await expectProblem(await me(ctx, sa2.accessToken), 401, 'invalid_token');
        await expectProblem(await refresh(ctx, sa2.refreshToken!), 401, 'invalid_token');
        await expectProblem(
          await ctx.request(`/auth/sessions/${randomUUID()}`, { method: 'DELETE', bearer: sa.accessToken }),
          404,
          'not_found',
        );
      });

      it('DELETE /auth/sessions needs fresh authentication: 403 reauth_required, then the password', async () => {
        const a = await signUp(ctx);
        const mine = await login(ctx, a);
        const other = await login(ctx, a);
        ctx.clock.advance(11 * MIN);
        const r1 = await expectJson<SessionBody>(await refresh(ctx, mine.refreshToken!), 200);
        await expectProblem(
          await ctx.request('/auth/sessions', { method: 'DELETE', bearer: r1.accessToken }),
          403,
          'reauth_required',
        );
        await expectProblem(
          await ctx.request('/auth/sessions', {
            method: 'DELETE',
            bearer: r1.accessToken,
            json: { password: NEW_PASSWORD },
          }),
          403,
          'reauth_required',
        );
        const ok = await ctx.request('/auth/sessions', {
          method: 'DELETE',
          bearer: r1.accessToken,
          json: { password: PASSWORD },
        });
        expect(ok.status).toBe(204);
        await expectProblem(await refresh(ctx, other.refreshToken!), 401, 'invalid_token');
        await expectJson(await me(ctx, r1.accessToken), 200);
      });

      it('GET /auth/.well-known/jwks.json serves public keys only, ES256 by default', async () => {
        const body = await expectJson<{ keys: Array<Record<string, unknown>> }>(
          await ctx.request('/auth/.well-known/jwks.json'),
          200,
        );
        expect(body.keys.length).toBeGreaterThan(0);
        for (const k of body.keys) {
          // P-256: the key type other services' JWKS clients read (see docs/verify-tokens.md).
          expect(k).toMatchObject({
            kid: expect.any(String),
            alg: 'ES256',
            use: 'sig',
            kty: 'EC',
            crv: 'P-256',
          });
          expect(k.d).toBeUndefined();
          expect(k.k).toBeUndefined();
        }
      });
    });

    describe('error answers of the auth routes', () => {
      it('answers 400 invalid_json, 415 unsupported_media_type and 413 payload_too_large as problems', async () => {
        await expectProblem(
          await ctx.request('/auth/login', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: '{"email":',
          }),
          400,
          'invalid_json',
        );
        // JSON is UTF-8: a body with other bytes is not JSON, whatever it parses to.
        const latin1 = Buffer.concat([
          Buffer.from(`{"email":"${freshEmail('auth')}","password":"pass`),
          Buffer.from([0xff]),
          Buffer.from('word-long-enough"}'),
        ]);
        await expectProblem(
          await ctx.request('/auth/login', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: latin1,
          }),
          400,
          'invalid_json',
        );
        // A lone surrogate has no UTF-8 form, so it cannot be hashed as sent.
        const lone = await expectProblem(
          await ctx.request('/auth/signup', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: `{"name":"x","email":"${freshEmail('auth')}","password":"violet-otter-\\ud800-gravel"}`,
          }),
          400,
          'validation_failed',
        );
        expect(lone.errors).toEqual([{ path: 'password', message: expect.any(String) }]);
        await expectProblem(
          await ctx.request('/auth/login', {
            method: 'POST',
            headers: { 'content-type': 'text/plain' },
            body: 'x',
          }),
          415,
          'unsupported_media_type',
        );
        await expectProblem(
          await ctx.request('/auth/signup', {
            json: { name: 'x', email: freshEmail('auth'), password: 'p'.repeat(101 * 1024) },
          }),
          413,
          'payload_too_large',
        );
      });

      it('answers 404 not_found for an unknown auth route', async () => {
        await expectProblem(await ctx.request('/auth/no-such-thing'), 404, 'not_found');
      });
    });
  });

  describe('auth throttling and configuration', () => {
    it('answers 429 after 100 refreshes of one session in 15 minutes, and the session and its token stay good', async () => {
      const ctx = await env.setup();
      try {
        const a = await signUp(ctx);
        const other = await login(ctx, a);
        const first = await login(ctx, a);
        let s = first;
        for (let i = 0; i < 100; i++)
          s = await expectJson<SessionBody>(await refresh(ctx, s.refreshToken!), 200);
        for (let i = 0; i < 2; i++) {
          const limited = await refresh(ctx, s.refreshToken!);
          await expectProblem(limited, 429, 'rate_limited');
          // The rest of the window, which began at the first of the 100.
          expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(15 * 60 - 60);
          expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(15 * 60);
        }
        // Refused, not taken for reuse: the session lives on, and other sessions have budgets of their own.
        await expectJson(await ctx.request('/auth/me', { bearer: s.accessToken }), 200);
        await expectJson(await refresh(ctx, other.refreshToken!), 200);
        // A rotated token is still reuse over the budget: the family ends.
        await expectProblem(await refresh(ctx, first.refreshToken!), 401, 'invalid_token');
        await expectProblem(await ctx.request('/auth/me', { bearer: s.accessToken }), 401, 'invalid_token');
      } finally {
        await ctx.close();
      }
    });

    it('answers 429 rate_limited with Retry-After after 10 failed logins for one email', async () => {
      const ctx = await env.setup();
      try {
        const a = await signUp(ctx);
        for (let i = 0; i < 10; i++) {
          await expectProblem(
            await ctx.request('/auth/login', { json: { email: a.email, password: `wrong-${i}` } }),
            401,
            'invalid_credentials',
          );
        }
        const limited = await ctx.request('/auth/login', { json: { email: a.email, password: a.password } });
        await expectProblem(limited, 429, 'rate_limited');
        const retry = Number(limited.headers.get('retry-after'));
        expect(retry).toBeGreaterThan(0);
        expect(retry).toBeLessThanOrEqual(15 * 60);
        // Unknown emails are counted the same way.
        const ghost = freshEmail('ghost');
        for (let i = 0; i < 10; i++)
          await expectProblem(
            await ctx.request('/auth/login', { json: { email: ghost, password: 'x' } }),
            401,
            'invalid_credentials',
          );
        await expectProblem(
          await ctx.request('/auth/login', { json: { email: ghost, password: 'x' } }),
          429,
          'rate_limited',
        );
        ctx.clock.advance(retry * 1000);
        await login(ctx, a);
      } finally {
        await ctx.close();
      }
    });

    it("10 failed logins from one address do not refuse the owner's right password from another", async () => {
      const ctx = await env.setup({ trustedProxies: ['127.0.0.0/8', '::1/128'] });
      try {
        const a = await signUp(ctx);
        const from = (ip: string, password: string) =>
          ctx.request('/auth/login', {
            json: { email: a.email, password },
            headers: { 'x-forwarded-for': ip },
          });
        for (let i = 0; i < 10; i++)
          await expectProblem(await from('203.0.113.66', `wrong-${i}`), 401, 'invalid_credentials');
        await expectJson(await from('198.51.100.7', a.password), 200);
        await expectProblem(await from('203.0.113.66', a.password), 429, 'rate_limited');
        // Re-authentication from the owner's address is not blocked either.
        const s = await expectJson<SessionBody>(await from('198.51.100.7', a.password), 200);
        const revoked = await ctx.request('/auth/sessions', {
          method: 'DELETE',
          json: { password: a.password },
          bearer: s.accessToken,
          headers: { 'x-forwarded-for': '198.51.100.7' },
        });
        expect(revoked.status).toBe(204);
      } finally {
        await ctx.close();
      }
    });

    it('mails the owner when the right password follows 3 failed ones', async () => {
      const ctx = await env.setup();
      try {
        const a = await signUp(ctx);
        for (let i = 0; i < 3; i++)
          await expectProblem(
            await ctx.request('/auth/login', { json: { email: a.email, password: `wrong-${i}` } }),
            401,
            'invalid_credentials',
          );
        await login(ctx, a);
        const notice = await ctx.mail.waitFor(a.email, (m) => /followed failed attempts/.test(m.subject));
        expect(notice.text).toMatch(/after 3 failed attempts/);
      } finally {
        await ctx.close();
      }
    });

    it('a parallel burst of logins for one email gets no more than 10 password checks', async () => {
      const ctx = await env.setup();
      try {
        const a = await signUp(ctx);
        // 30 at once, the right password last: every attempt is counted before its password is
        // checked, so the 11th and later are refused without a check, the right one included.
        const answers = await Promise.all(
          Array.from({ length: 30 }, (_, i) =>
            ctx.request('/auth/login', {
              json: { email: a.email, password: i === 29 ? a.password : `wrong-${i}` },
            }),
          ),
        );
        const statuses = answers.map((r) => r.status);
        expect(statuses.filter((s) => s === 401)).toHaveLength(10);
        expect(statuses.filter((s) => s === 429)).toHaveLength(20);
        expect(statuses[29]).toBe(429);
        await expectProblem(
          await ctx.request('/auth/login', { json: { email: a.email, password: a.password } }),
          429,
          'rate_limited',
        );
      } finally {
        await ctx.close();
      }
    });

    it('keeps answering 202 to forgot over its limit but sends no more mail', async () => {
      const ctx = await env.setup();
      try {
        const a = await signUp(ctx);
        for (let i = 0; i < 4; i++)
          await expectJson(await ctx.request('/auth/forgot', { json: { email: a.email } }), 202);
        await ctx.mail.waitFor(a.email, () => ctx.mail.to(a.email).length >= 3);
        // A fourth mail would have been queued right behind the third.
        await new Promise((r) => setTimeout(r, 300));
        expect(ctx.mail.to(a.email)).toHaveLength(3);
      } finally {
        await ctx.close();
      }
    });

    it('answers 404 not_found to signup when the host switched it off', async () => {
      const ctx = await env.setup({ routes: { signup: false } });
      try {
        await expectProblem(
          await ctx.request('/auth/signup', {
            json: { name: 'No', email: freshEmail('auth'), password: PASSWORD },
          }),
          404,
          'not_found',
        );
        expect(ctx.ph.routes.some((r) => r.fullPath === '/auth/signup')).toBe(false);
      } finally {
        await ctx.close();
      }
    });

    it('answers 404 to the email verification and change routes when the host switched them off', async () => {
      const ctx = await env.setup({ routes: { emailVerification: false, emailChange: false } });
      try {
        const a = await signUp(ctx);
        const s = await login(ctx, a);
        for (const path of [
          '/auth/verify-email/send',
          '/auth/verify-email',
          '/auth/email',
          '/auth/email/confirm',
        ])
          await expectProblem(
            await ctx.request(path, { json: { code: '123456' }, bearer: s.accessToken }),
            404,
            'not_found',
          );
      } finally {
        await ctx.close();
      }
    });

    it('with refreshReuseGraceSeconds, concurrent refreshes of one token all get pairs in the same family', async () => {
      const ctx = await env.setup({ refreshReuseGraceSeconds: 10 });
      try {
        const a = await signUp(ctx);
        const s = await login(ctx, a);
        const answers = await Promise.all(Array.from({ length: 4 }, () => refresh(ctx, s.refreshToken!)));
        expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200]);
        const pairs = (await Promise.all(answers.map((r) => r.json()))) as SessionBody[];
        for (const p of pairs) await expectJson(await me(ctx, p.accessToken), 200);
        await expectJson(await refresh(ctx, pairs[0]!.refreshToken!), 200);
        // Outside the window a repeat is reuse again.
        ctx.clock.advance(11_000);
        await expectProblem(await refresh(ctx, s.refreshToken!), 401, 'invalid_token');
        await expectProblem(await me(ctx, pairs[1]!.accessToken), 401, 'invalid_token');
      } finally {
        await ctx.close();
      }
    });
  });
}
