import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type Setup, STRONG, STRONG_2, session, setup, totpCode, totpUser, user } from './setup.js';

/** Resets the user's password through the mailed code (the clock moves on first: a change is
 *  told by when the password was set). */
async function resetPassword(t: Setup, address: string): Promise<void> {
  t.clock.advance(1000);
  const sent = t.mailer.mails.length;
  await t.ph.auth.forgot({ email: address });
  const mail = await t.mailer.waitFor(
    address,
    (m) => /reset code/i.test(m.subject) && t.mailer.mails.indexOf(m) >= sent,
  );
  await t.ph.auth.forgotReset({ code: /Reset code: (\S+)/.exec(mail.text)![1]!, password: STRONG_2 });
}

/** Runs `during` once, the first time `target[method]` is called, before the call itself:
 *  what a concurrent request committing in between would do. */
function before<T extends object, K extends keyof T>(target: T, method: K, during: () => Promise<void>) {
  const original = (target[method] as (...a: unknown[]) => Promise<unknown>).bind(target);
  let pending = true;
  (target as Record<K, unknown>)[method] = async (...args: unknown[]) => {
    if (pending) {
      pending = false;
      await during();
    }
    return original(...args);
  };
}

describe('a login racing a password reset', () => {
  it('gets no session when the reset commits between the password check and the session', async () => {
    const t = setup();
    const u = await user(t);
    before(t.stores.sessions, 'create', () => resetPassword(t, u.email));
    await expect(
      t.ph.auth.login({ email: u.email, password: STRONG, refreshToken: true }),
    ).rejects.toMatchObject({ code: 'invalid_credentials' });
    expect(await t.stores.sessions.listForUser(u.id, t.clock.now())).toEqual([]);
    expect(t.log.lines.map((e) => e.fields)).toContainEqual(
      expect.objectContaining({ event: 'login', outcome: 'failure', reason: 'credentials_changed' }),
    );
    // The new password works; nothing else was disturbed.
    await session(t, { email: u.email, password: STRONG_2 });
  });

  it('gets no session when the user is disabled meanwhile', async () => {
    const t = setup();
    const u = await user(t);
    before(t.stores.sessions, 'create', () => t.ph.auth.disableUser(u.id));
    await expect(
      t.ph.auth.login({ email: u.email, password: STRONG, refreshToken: true }),
    ).rejects.toMatchObject({ code: 'invalid_credentials' });
    expect(await t.stores.sessions.listForUser(u.id, t.clock.now())).toEqual([]);
  });

  it('cannot outlive a deletion whose sessions were ended before its own was made', async () => {
    const t = setup();
    const u = await user(t);
    // The whole login runs after deleteUser ended the sessions and before it deletes the user.
    let login: unknown;
    before(t.stores.users, 'delete', async () => {
      login = await t.ph.auth.login({ email: u.email, password: STRONG, refreshToken: true }).catch((e) => e);
    });
    await t.ph.auth.deleteUser(u.id);
    expect(login).toMatchObject({ code: 'invalid_credentials' });
    expect(await t.stores.sessions.listForUser(u.id, t.clock.now())).toEqual([]);
  });

  it('keeps its session when nothing changed', async () => {
    const t = setup();
    const u = await user(t);
    await session(t, u);
    expect(await t.stores.sessions.listForUser(u.id, t.clock.now())).toHaveLength(1);
  });

  it('gets no pending login when the reset commits while the password is checked (MFA on)', async () => {
    const t = setup({ mfa: { encryptionKey: randomBytes(32) } });
    const u = await totpUser(t);
    // A proven address: a reset then keeps the factor (on a never-proven one it clears it).
    await t.stores.users.markEmailVerified(u.id);
    const totp = () => totpCode(u.secret, t);
    t.clock.advance(30_000);

    before(t.stores.pendingLogins, 'create', () => resetPassword(t, u.email));
    await expect(t.ph.auth.login({ email: u.email, password: STRONG })).rejects.toMatchObject({
      code: 'invalid_credentials',
    });

    // A pending login opened before the reset, completed after it: no session either.
    t.clock.advance(30_000);
    const pending = await t.ph.auth.login({ email: u.email, password: STRONG_2 });
    if (!('mfaToken' in pending)) throw new Error('MFA expected');
    before(t.stores.sessions, 'create', () => resetPassword(t, u.email));
    await expect(t.ph.mfa.verifyMfa({ token: pending.mfaToken, code: totp() })).rejects.toMatchObject({
      code: 'invalid_token',
    });
    expect(await t.stores.sessions.listForUser(u.id, t.clock.now())).toEqual([]);
  });
});
