import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { email, STRONG, setup } from './setup.js';

const HOUR = 3_600_000;

/** A user whose only second step is email codes, an hour after enrolling (a fresh mail budget). */
async function emailOnlyUser(t: ReturnType<typeof setup>) {
  const address = email('mailmfa');
  await t.ph.auth.signup({ name: 'Mail', email: address, password: STRONG });
  const first = await t.ph.auth.login({ email: address, password: STRONG });
  if (!('accessToken' in first)) throw new Error('expected a session');
  const principal = await t.ph.auth.verifyAccessToken(first.accessToken);
  await t.ph.mfa.emailSetup(principal);
  const enrol = await t.mailer.waitFor(address);
  await t.ph.mfa.emailConfirm(principal, { code: /\d{6}/.exec(enrol.text)![0] });
  t.clock.advance(HOUR);
  return { address, principal };
}

const settle = () => new Promise((r) => setTimeout(r, 50));

describe('login codes of email-only MFA users', () => {
  it('count under the per-user mail limit: 25 logins mail 10 codes; the others still get a pending login', async () => {
    const t = setup({ mfa: { encryptionKey: randomBytes(32) } });
    const { address } = await emailOnlyUser(t);
    const before = t.mailer.mails.length;
    const tokens: string[] = [];
    for (let i = 0; i < 25; i++) {
      const a = await t.ph.auth.login({ email: address, password: STRONG }, { ip: '192.0.2.30' });
      expect(a).toMatchObject({ mfaRequired: true, methods: ['email', 'recovery'] });
      tokens.push((a as { mfaToken: string }).mfaToken);
    }
    await settle();
    expect(t.mailer.mails.length - before).toBe(10);
    const skipped = t.log.lines.filter((l) => l.fields.event === 'mfa_code_not_mailed');
    expect(skipped).toHaveLength(15);
    expect(skipped[0]).toMatchObject({ level: 'warn', fields: { reason: 'mail:user', ip: '192.0.2.30' } });
    // Asking again for a capped login's code is a 429 with the rest of the window, not a mail.
    const refused = await t.ph.mfa.resendCode({ token: tokens[24]! }).catch((e) => e);
    expect(refused).toMatchObject({ code: 'rate_limited', reason: 'mail:user' });
    expect(refused.retryAfter).toBeGreaterThan(0);
    // A mailed code of the first logins still completes its own login.
    const tenth = t.mailer.mails.at(-1)!;
    await t.ph.mfa.loginWithEmailCode({ token: tokens[9]!, code: /\d{6}/.exec(tenth.text)![0] });
    // The window ends: codes are mailed again.
    t.clock.advance(HOUR);
    await t.ph.auth.login({ email: address, password: STRONG });
    await settle();
    expect(t.mailer.mails.length - before).toBe(11);
  });
});
