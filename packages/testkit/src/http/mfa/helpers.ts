// What the MFA scenario suites share: options, accounts, logins, codes and enrolments.
import { randomBytes } from 'node:crypto';
import * as OTPAuth from 'otpauth';
import { expect } from 'vitest';
import type { TestClock } from '../../test-clock.js';
import { expectProblem } from '../expect.js';
import type { HttpContext } from '../harness.js';
import { expectJson, freshEmail, SCENARIO_PASSWORD as PASSWORD, signUpAndLogIn } from '../session.js';
import { SoftAuthenticator } from '../soft-authenticator.js';

export const ORIGIN = 'https://postern.test';
/** The scenarios' password, the one every HTTP scenario signs up with. */
export { PASSWORD };
export const STEP = 30_000;

/** The instance the `MFA` suite sets up, shared by the factor suites declared inside it. */
export interface SharedMfa {
  ctx: HttpContext;
}

/** Options every MFA scenario runs with: a pinned relying party and a sealing key. */
export const MFA_OPTIONS = {
  webauthn: { rpId: 'postern.test', rpName: 'Postern test', origin: ORIGIN },
  mfa: { encryptionKey: randomBytes(32) },
};

export interface Account {
  email: string;
  password: string;
  access: string;
}
export interface Session {
  accessToken: string;
  tokenType: string;
  expiresIn: number;
  refreshToken?: string;
}
export interface Pending {
  mfaRequired: true;
  mfaToken: string;
  methods: string[];
}

/** The TOTP code an authenticator app shows at the server's clock (`steps` away). */
export function totp(secret: string, clock: TestClock, steps = 0): string {
  return new OTPAuth.TOTP({
    secret: OTPAuth.Secret.fromBase32(secret),
    algorithm: 'SHA1',
    digits: 6,
    period: 30,
  }).generate({ timestamp: clock.now().getTime() + steps * STEP });
}

export async function signupAndLogin(ctx: HttpContext, password = PASSWORD): Promise<Account> {
  const a = await signUpAndLogIn(ctx, { email: freshEmail('mfa'), password, name: 'Mfa Tester' });
  return { email: a.email, password, access: a.accessToken };
}

export async function login(ctx: HttpContext, a: Account, refreshToken?: boolean | 'cookie') {
  return ctx.request('/auth/login', {
    json: { email: a.email, password: a.password, ...(refreshToken === undefined ? {} : { refreshToken }) },
  });
}

export async function pendingLogin(
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
export async function expectPendingDead(ctx: HttpContext, p: Pending, secret: string): Promise<void> {
  await expectProblem(
    await ctx.request('/auth/mfa/verify', { json: { token: p.mfaToken, code: totp(secret, ctx.clock) } }),
    401,
    'invalid_token',
  );
}

export async function enrolTotp(
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
export async function nextCode(ctx: HttpContext, to: string, seen: number): Promise<string> {
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
export async function expectOneWinner(
  ctx: HttpContext,
  path: string,
  body: Record<string, unknown>,
): Promise<void> {
  const answers = await Promise.all(Array.from({ length: 8 }, () => ctx.request(path, { json: body })));
  const bodies = await Promise.all(
    answers.map(async (r) => ({ status: r.status, code: ((await r.json()) as { code?: string }).code })),
  );
  expect(bodies.filter((b) => b.status === 200)).toHaveLength(1);
  expect(bodies.filter((b) => b.status === 401).map((b) => b.code)).toEqual(Array(7).fill('invalid_token'));
}

export const codeMails = (ctx: HttpContext, to: string) =>
  ctx.mail.to(to).filter((m) => m.subject === 'Your sign-in code').length;

export async function enrolEmail(ctx: HttpContext, a: Account): Promise<{ recoveryCodes?: string[] }> {
  const seen = codeMails(ctx, a.email);
  await expectJson(await ctx.request('/auth/mfa/email/setup', { method: 'POST', bearer: a.access }), 202);
  const code = await nextCode(ctx, a.email, seen);
  // The mail says what entering the code does here (not "did you try to sign in").
  const mail = ctx.mail.to(a.email).filter((m) => m.subject === 'Your sign-in code')[seen]!;
  expect(mail.text).toMatch(/turns on sign-in codes by email/);
  return expectJson(await ctx.request('/auth/mfa/email/confirm', { json: { code }, bearer: a.access }), 200);
}

export async function enrolPasskey(ctx: HttpContext, a: Account, auth = new SoftAuthenticator(ORIGIN)) {
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
export async function verifyPasskey(
  ctx: HttpContext,
  mfaToken: string,
  auth: SoftAuthenticator,
  over?: Parameters<SoftAuthenticator['assert']>[1],
) {
  const assertionResponse = auth.assert(await passkeyOptions(ctx, mfaToken), over);
  return ctx.request('/auth/mfa/webauthn/verify', { json: { mfaToken, assertionResponse } });
}

export async function passkeyOptions(ctx: HttpContext, mfaToken: string) {
  return expectJson<{ challenge: string; rpId: string; allowCredentials: Array<{ id: string }> }>(
    await ctx.request('/auth/mfa/webauthn/options', { json: { mfaToken } }),
    200,
  );
}

export async function me(ctx: HttpContext, access: string) {
  return expectJson<{ user: { mfa: { enabled: boolean; methods: string[] } } }>(
    await ctx.request('/auth/me', { bearer: access }),
    200,
  );
}
