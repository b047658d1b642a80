import { memoryStores } from '@postern/core/memory';
import { TestClock } from '@postern/testkit';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../../src/tokens/opaque.js';
import { email, STRONG, session, setup, user } from './setup.js';

describe('email change against a racing password reset', () => {
  it('a reset code mailed to the old address after the change committed is dead', async () => {
    // The reset request finds the user by the old address, then stores its code: the store is
    // slowed so the change commits (and voids codes) in between, as it can in production.
    const clock = new TestClock(Date.UTC(2030, 0, 1));
    const stores = memoryStores({ clock });
    const create = stores.resetCodes.create.bind(stores.resetCodes);
    let slow = false;
    stores.resetCodes.create = async (c) => {
      if (slow) await new Promise((r) => setTimeout(r, 100));
      return create(c);
    };
    const t = setup({}, { stores, clock });
    const u = await user(t);
    const { accessToken } = await session(t, u);
    const principal = await t.ph.auth.verifyAccessToken(accessToken);
    const next = email('moved');
    await t.ph.auth.requestEmailChange(principal, { newEmail: next, password: STRONG });
    const code = /\d{6}/.exec((await t.mailer.waitFor(next)).text)![0];

    slow = true;
    await t.ph.auth.forgot({ email: u.email });
    // Let the reset request find the user (by the old address) and reach its slowed store.
    await new Promise((r) => setTimeout(r, 20));
    await t.ph.auth.confirmEmailChange(principal, { newEmail: next, code });
    const reset = await t.mailer.waitFor(u.email, (m) => /reset code/i.test(m.subject));
    const resetCode = /Reset code: (\S+)/.exec(reset.text)![1]!;
    await expect(
      t.ph.auth.forgotReset({ code: resetCode, password: 'violet-otter-jumps-gravel-1987' }),
    ).rejects.toMatchObject({ code: 'invalid_code' });
    await session(t, { email: next, password: STRONG });
  });
});

describe('reset codes without an address', () => {
  it('are taken as before (rows from before Postgres migration 0008, or a not yet upgraded instance)', async () => {
    const t = setup();
    const u = await user(t);
    await t.stores.resetCodes.create({
      hash: sha256('legacy-code-'.padEnd(43, 'x')),
      userId: u.id,
      email: '',
      createdAt: t.clock.now(),
      expiresAt: new Date(t.clock.now().getTime() + 60_000),
    });
    await t.ph.auth.forgotReset({
      code: 'legacy-code-'.padEnd(43, 'x'),
      password: 'violet-otter-jumps-gravel-1987',
    });
    await session(t, { email: u.email, password: 'violet-otter-jumps-gravel-1987' });
  });
});

describe('email change requests are limited', () => {
  it('a taken address costs a send: one per 30 s and 10 per hour per user, then 429 before the lookup', async () => {
    const t = setup();
    const u = await user(t);
    const others = await Promise.all(Array.from({ length: 12 }, () => user(t)));
    const principal = await t.ph.auth.verifyAccessToken((await session(t, u)).accessToken);
    const ask = (newEmail: string) => t.ph.auth.requestEmailChange(principal, { newEmail, password: STRONG });
    await expect(ask(others[0]!.email)).rejects.toMatchObject({ code: 'email_taken' });
    // Within 30 s of the last request: refused before anything tells whether the address is taken.
    await expect(ask(others[1]!.email)).rejects.toMatchObject({ code: 'rate_limited', status: 429 });
    await expect(ask(email('free'))).rejects.toMatchObject({ code: 'rate_limited' });
    for (let i = 2; i < 11; i++) {
      t.clock.advance(31_000);
      await expect(ask(others[i]!.email)).rejects.toMatchObject({ code: 'email_taken' });
    }
    t.clock.advance(31_000);
    await expect(ask(others[11]!.email)).rejects.toMatchObject({ code: 'rate_limited' });
    t.clock.advance(60 * 60_000);
    await expect(ask(others[11]!.email)).rejects.toMatchObject({ code: 'email_taken' });
  });

  it('a wrong password is a failed login of the account: 10 from one address, then 429', async () => {
    const t = setup();
    const u = await user(t);
    const principal = await t.ph.auth.verifyAccessToken((await session(t, u)).accessToken);
    const meta = { ip: '203.0.113.9' };
    for (let i = 0; i < 10; i++)
      await expect(
        t.ph.auth.requestEmailChange(principal, { newEmail: email('x'), password: `wrong-${i}-pass` }, meta),
      ).rejects.toMatchObject({ code: 'reauth_required' });
    await expect(t.ph.auth.login({ email: u.email, password: STRONG }, meta)).rejects.toMatchObject({
      code: 'rate_limited',
    });
    await expect(
      t.ph.auth.requestEmailChange(principal, { newEmail: email('x'), password: STRONG }, meta),
    ).rejects.toMatchObject({ code: 'rate_limited' });
  });
});
