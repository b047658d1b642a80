import { randomBytes } from 'node:crypto';
import type { Stores } from '@postern/core';
import { memoryStores } from '@postern/core/memory';
import { TestClock } from '@postern/testkit';
import { describe, expect, it } from 'vitest';
import { email, STRONG, session, setup, totpCode, user } from './setup.js';

/** Memory stores whose `pendingLogins.consume` waits a moment first: the window in which a
 *  winning attempt has checked its code but not yet taken the pending login, widened so a
 *  race that is rare on real stores happens every time. */
function slowConsumeStores(ms: number): { stores: Stores; clock: TestClock } {
  const clock = new TestClock(Date.UTC(2030, 0, 1));
  const stores = memoryStores({ clock });
  const consume = stores.pendingLogins.consume.bind(stores.pendingLogins);
  stores.pendingLogins.consume = async (jti, now) => {
    await new Promise((r) => setTimeout(r, ms));
    return consume(jti, now);
  };
  return { stores, clock };
}

describe('parallel copies of one right MFA code', () => {
  it('eight copies of the emailed code: one session, seven invalid_token, none counted as wrong', async () => {
    const t = setup({ mfa: { encryptionKey: randomBytes(32) } }, slowConsumeStores(30));
    const address = email('race');
    await t.ph.auth.signup({ name: 'Race', email: address, password: STRONG });
    const first = await t.ph.auth.login({ email: address, password: STRONG });
    if (!('accessToken' in first)) throw new Error('expected a session');
    const principal = await t.ph.auth.verifyAccessToken(first.accessToken);
    await t.ph.mfa.emailSetup(principal);
    const enrolMail = await t.mailer.waitFor(address);
    await t.ph.mfa.emailConfirm(principal, { code: /\d{6}/.exec(enrolMail.text)![0] });

    t.clock.advance(60_000);
    const pending = await t.ph.auth.login({ email: address, password: STRONG });
    if (!('mfaRequired' in pending)) throw new Error('expected a pending login');
    const mail = await t.mailer.waitFor(address, (m) => m !== enrolMail);
    const code = /\d{6}/.exec(mail.text)![0];
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, () => t.ph.mfa.loginWithEmailCode({ token: pending.mfaToken, code })),
    );
    // Used up by its check, the code would make seven losers wrong tries, and the fifth would
    // kill the pending login before the winner took it: no session at all.
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(
      results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as { code: string }).code] : [])),
    ).toEqual(Array(7).fill('invalid_token'));
    expect(t.log.lines.filter((e) => e.fields.event === 'mfa_failed')).toEqual([]);
  });
});

describe('two first factors confirmed at once', () => {
  it('show one set of recovery codes, and that set works', async () => {
    const t = setup({ mfa: { encryptionKey: randomBytes(32) } });
    const u = await user(t);
    const principal = await t.ph.auth.verifyAccessToken((await session(t, u)).accessToken);
    const { secret } = await t.ph.mfa.totpSetup(principal);
    await t.ph.mfa.emailSetup(principal);
    const code = /\d{6}/.exec((await t.mailer.waitFor(u.email)).text)![0];
    const answers = await Promise.all([
      t.ph.mfa.totpConfirm(principal, { code: totpCode(secret, t) }),
      t.ph.mfa.emailConfirm(principal, { code }),
    ]);
    // Both used to get a set, and the later write killed the other one's codes.
    const shown = answers.flatMap((a) => (a.recoveryCodes ? [a.recoveryCodes] : []));
    expect(shown).toHaveLength(1);
    for (const recovery of shown[0]!.slice(0, 2)) {
      t.clock.advance(60_000);
      const pending = await t.ph.auth.login({ email: u.email, password: u.password });
      if (!('mfaRequired' in pending)) throw new Error('expected a pending login');
      const done = await t.ph.mfa.verifyMfa({
        token: pending.mfaToken,
        code: recovery,
        methodType: 'recovery',
      });
      expect(done).toHaveProperty('accessToken');
    }
  });
});
