import { createHash, randomBytes } from 'node:crypto';
import type { Mail } from '@postern/core';
import { describe, expect, it } from 'vitest';
import { email, STRONG_2, session, setup, totpUser, user } from './setup.js';

const codeOf = (m: Mail) => /Reset code: (\S+)/.exec(m.text)![1]!;
const sha = (s: string) => createHash('sha256').update(s).digest('base64url');

describe('password reset', () => {
  it('mails a 256-bit base64url code and stores only its SHA-256, valid 30 minutes', async () => {
    const t = setup();
    const u = await user(t);
    expect(await t.ph.auth.forgot({ email: u.email })).toEqual({ accepted: true });
    const code = codeOf(await t.mailer.waitFor(u.email));
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await t.stores.resetCodes.find(code, t.clock.now())).toBeNull();
    const stored = await t.stores.resetCodes.find(sha(code), t.clock.now());
    expect(stored).toMatchObject({ userId: u.id });
    expect(stored!.expiresAt.getTime() - t.clock.now().getTime()).toBe(30 * 60_000);
  });

  it('answers at once whatever the mailer does: the mail is queued, never awaited', async () => {
    const never: Mail[] = [];
    const t = setup({
      mailer: {
        send: (m) => {
          never.push(m);
          return new Promise(() => {});
        },
      },
    });
    const u = await user(t);
    expect(await t.ph.auth.forgot({ email: u.email })).toEqual({ accepted: true });
    expect(await t.ph.auth.forgot({ email: email() })).toEqual({ accepted: true });
  });

  it('looks the email up only after the answer is out, so a known one is not slower', async () => {
    const t = setup();
    const u = await user(t);
    let lookups = 0;
    const findByEmail = t.stores.users.findByEmail.bind(t.stores.users);
    t.stores.users.findByEmail = (e) => {
      lookups += 1;
      return findByEmail(e);
    };
    const out = await t.ph.handle({
      method: 'POST',
      path: '/auth/forgot',
      headers: { 'content-type': 'application/json', host: 'postern.test' },
      body: Buffer.from(JSON.stringify({ email: u.email })),
      ip: '192.0.2.1',
    });
    // In-process stores answer in microtasks: run in the answer's own turn, the lookup, code
    // and mail of a known email would delay it.
    expect({ status: out?.status, lookups }).toEqual({ status: 202, lookups: 0 });
    await t.mailer.waitFor(u.email);
    expect(lookups).toBe(1);
  });

  it('sends nothing for unknown or disabled accounts and answers the same', async () => {
    const t = setup();
    const u = await user(t);
    await t.ph.auth.disableUser(u.id);
    const ghost = email();
    expect(await t.ph.auth.forgot({ email: ghost })).toEqual({ accepted: true });
    expect(await t.ph.auth.forgot({ email: u.email })).toEqual({ accepted: true });
    await (t.ph as unknown as { close(): Promise<void> }).close();
    expect(t.mailer.mails).toEqual([]);
  });

  it('reset sets the password, verifies the email, ends every session, and mails the owner', async () => {
    const t = setup();
    const u = await user(t);
    const s = await session(t, u);
    await t.ph.auth.forgot({ email: u.email });
    const code = codeOf(await t.mailer.waitFor(u.email));
    await t.ph.auth.forgotReset({ code, password: STRONG_2 });
    await expect(t.ph.auth.verifyAccessToken(s.accessToken)).rejects.toMatchObject({ code: 'invalid_token' });
    await expect(t.ph.auth.refresh({ refreshToken: s.refreshToken })).rejects.toMatchObject({
      code: 'invalid_token',
    });
    await expect(t.ph.auth.login({ email: u.email, password: u.password })).rejects.toMatchObject({
      code: 'invalid_credentials',
    });
    const after = await session(t, { email: u.email, password: STRONG_2 });
    const me = await t.ph.auth.me(await t.ph.auth.verifyAccessToken(after.accessToken));
    expect(me.user.emailVerified).toBe(true);
    const mail = await t.mailer.waitFor(u.email, (m) => /changed/.test(m.subject));
    expect(mail.text).not.toContain(code);
  });

  it('a code works once, even for concurrent resets', async () => {
    const t = setup();
    const u = await user(t);
    await t.ph.auth.forgot({ email: u.email });
    const code = codeOf(await t.mailer.waitFor(u.email));
    const results = await Promise.allSettled(
      Array.from({ length: 4 }, () => t.ph.auth.forgotReset({ code, password: STRONG_2 })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results.filter((x) => x.status === 'rejected'))
      expect((r as PromiseRejectedResult).reason).toMatchObject({ code: 'invalid_code' });
  });

  it('a weak new password leaves the code usable', async () => {
    const t = setup();
    const u = await user(t);
    await t.ph.auth.forgot({ email: u.email });
    const code = codeOf(await t.mailer.waitFor(u.email));
    await expect(t.ph.auth.forgotReset({ code, password: 'password' })).rejects.toMatchObject({
      code: 'validation_failed',
    });
    await t.ph.auth.forgotReset({ code, password: STRONG_2 });
  });

  it('stops mailing after 3 requests per email in 15 minutes but keeps answering 202', async () => {
    const t = setup();
    const u = await user(t);
    for (let i = 0; i < 5; i++)
      expect(await t.ph.auth.forgot({ email: u.email })).toEqual({ accepted: true });
    await (t.ph as unknown as { close(): Promise<void> }).close();
    expect(t.mailer.mails.filter((m) => m.to === u.email)).toHaveLength(3);
  });

  it('on a never-proven address, clears the factors and recovery codes set up before, in the reset, and says so', async () => {
    const t = setup({ mfa: { encryptionKey: randomBytes(32) } });
    const squatter = await totpUser(t);
    const owner = await totpUser(t);
    await t.stores.users.markEmailVerified(owner.id);
    for (const u of [squatter, owner]) {
      t.clock.advance(1000);
      const sent = t.mailer.mails.length;
      await t.ph.auth.forgot({ email: u.email });
      const mail = await t.mailer.waitFor(u.email, (m) => t.mailer.mails.indexOf(m) >= sent);
      await t.ph.auth.forgotReset({ code: codeOf(mail), password: STRONG_2 });
    }
    expect(await t.stores.mfaFactors.listFactors(squatter.id)).toEqual([]);
    expect(await t.stores.recoveryCodes.listUnused(squatter.id)).toEqual([]);
    expect((await t.stores.users.findById(squatter.id))!.emailVerified).toBe(true);
    // A proven address keeps what its owner set up.
    expect((await t.stores.mfaFactors.listFactors(owner.id)).map((f) => f.type)).toEqual(['totp']);
    expect(await t.stores.recoveryCodes.listUnused(owner.id)).toHaveLength(10);
    expect(t.log.lines.filter((l) => l.fields.event === 'unproven_setup_cleared')).toEqual([
      expect.objectContaining({
        level: 'warn',
        fields: expect.objectContaining({
          userId: squatter.id,
          factors: ['totp'],
          passkeys: 0,
          memberships: 0,
        }),
      }),
    ]);
  });
});
