import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { HttpContext } from './harness.js';

/** A strong password the scenarios sign up with unless they need their own. */
export const SCENARIO_PASSWORD = 'Tangerine-Orbit-Velvet-4821';

/** Asserts `status` (showing the body when it differs) and returns the parsed JSON body. */
export async function expectJson<T>(res: Response, status: number): Promise<T> {
  const text = await res.text();
  expect({ status: res.status, body: text.slice(0, 300) }).toMatchObject({ status });
  return (text ? JSON.parse(text) : undefined) as T;
}

export interface SignedUp {
  id: string;
  email: string;
  password: string;
}

export interface LoggedIn extends SignedUp {
  accessToken: string;
  /** Set when the login asked for one (`refreshToken: true`). */
  refreshToken?: string;
}

/** A fresh email under `tag`, unique per call. */
export const freshEmail = (tag: string) => `${tag}-${randomUUID()}@example.test`;

/** Signs up a fresh user over HTTP (201). */
export async function signUp(
  ctx: HttpContext,
  { email = freshEmail('user'), password = SCENARIO_PASSWORD, name = 'Scenario Person' } = {},
): Promise<SignedUp> {
  const { user } = await expectJson<{ user: { id: string } }>(
    await ctx.request('/auth/signup', { json: { name, email, password } }),
    201,
  );
  return { id: user.id, email, password };
}

/** Signs up a fresh user and logs in (200 with a session, so no MFA on the account). */
export async function signUpAndLogIn(
  ctx: HttpContext,
  { refreshToken, ...who }: Parameters<typeof signUp>[1] & { refreshToken?: boolean } = {},
): Promise<LoggedIn> {
  const a = await signUp(ctx, who);
  const session = await expectJson<{ accessToken: string; refreshToken?: string }>(
    await ctx.request('/auth/login', {
      json: { email: a.email, password: a.password, ...(refreshToken === undefined ? {} : { refreshToken }) },
    }),
    200,
  );
  return { ...a, accessToken: session.accessToken, refreshToken: session.refreshToken };
}

/** Proves `email` through the verification routes, reading the code from the mail catcher. */
export async function proveEmail(ctx: HttpContext, email: string, accessToken: string): Promise<void> {
  const CONFIRM = 'Confirm your email address';
  const mails = () => ctx.mail.to(email).filter((m) => m.subject === CONFIRM);
  const seen = mails().length;
  await expectJson(
    await ctx.request('/auth/verify-email/send', { method: 'POST', bearer: accessToken }),
    202,
  );
  await ctx.mail.waitFor(email, () => mails().length > seen);
  const code = /\b(\d{6})\b/.exec(mails()[seen]!.text)![1]!;
  await expectJson(await ctx.request('/auth/verify-email', { bearer: accessToken, json: { code } }), 200);
}
