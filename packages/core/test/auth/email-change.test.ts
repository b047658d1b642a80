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
