import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { session, setup, totpCode, totpUser, user } from './setup.js';

const SUBJECT = 'A sign-in to your account followed failed attempts';
const settle = () => new Promise((r) => setTimeout(r, 30));
const notices = (t: ReturnType<typeof setup>, to: string) =>
  t.mailer.mails.filter((m) => m.to === to && m.subject === SUBJECT);

describe('a success after several failures mails the owner', () => {
  it('3 wrong passwords, then the right one: one notice naming the count; fewer failures, none', async () => {
    const t = setup();
    const u = await user(t);
    for (let i = 0; i < 2; i++)
      await expect(t.ph.auth.login({ email: u.email, password: `nope-${i}` })).rejects.toMatchObject({
        code: 'invalid_credentials',
      });
    await session(t, u);
    await settle();
    expect(notices(t, u.email)).toEqual([]);

    for (let i = 0; i < 3; i++)
      await t.ph.auth.login({ email: u.email, password: `nope-${i}` }).catch(() => {});
    await session(t, u);
    await settle();
    expect(notices(t, u.email)).toHaveLength(1);
    expect(notices(t, u.email)[0]!.text).toMatch(
      /Someone signed in to your account at .* after 3 failed attempts/,
    );
    expect(t.log.lines.find((l) => l.fields.event === 'failed_attempts_notice')?.fields).toMatchObject({
      userId: u.id,
      failures: 3,
      reason: 'signin',
    });
    // The success cleared the count: the next one mails nothing.
    await session(t, u);
    await settle();
    expect(notices(t, u.email)).toHaveLength(1);
  });

  it('wrong re-authentication passwords count too', async () => {
    const t = setup();
    const u = await user(t);
    const p = await t.ph.auth.verifyAccessToken((await session(t, u)).accessToken);
    for (let i = 0; i < 3; i++)
      await expect(
        t.ph.auth.requireFreshAuth(p, { password: `wrong-${i}-x`, requirePassword: true }),
      ).rejects.toMatchObject({ code: 'reauth_required' });
    await session(t, u);
    await settle();
    expect(notices(t, u.email)).toHaveLength(1);
  });

  it('with MFA: the password step after failed passwords, and the second step after wrong codes', async () => {
    const t = setup({ mfa: { encryptionKey: randomBytes(32) } });
    const u = await totpUser(t);
    for (let i = 0; i < 4; i++)
      await t.ph.auth.login({ email: u.email, password: `nope-${i}` }).catch(() => {});
    const pending = (await t.ph.auth.login({ email: u.email, password: u.password })) as { mfaToken: string };
    await settle();
    expect(notices(t, u.email)).toHaveLength(1);
    expect(notices(t, u.email)[0]!.text).toMatch(/password was entered correctly .* after 4 failed attempts/);
    expect(notices(t, u.email)[0]!.text).toMatch(/second sign-in step is still needed/);

    for (let i = 0; i < 3; i++)
      await expect(t.ph.mfa.verifyMfa({ token: pending.mfaToken, code: '000000' })).rejects.toMatchObject({
        code: 'invalid_code',
      });
    t.clock.advance(31_000);
    await t.ph.mfa.verifyMfa({ token: pending.mfaToken, code: totpCode(u.secret, t) });
    await settle();
    expect(notices(t, u.email)).toHaveLength(2);
    expect(notices(t, u.email)[1]!.text).toMatch(
      /second sign-in step of your account was passed .* after 3 failed/,
    );
  });
});
