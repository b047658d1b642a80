import { describe, expect, it } from 'vitest';
import { requireFreshAuth } from '../../src/auth/reauth.js';
import { authContext as context, email, STRONG, STRONG_2, session, setup, user } from './setup.js';

const MIN = 60_000;

describe('accounts', () => {
  it('disableUser ends every session and refuses logins with the usual answer until enabled', async () => {
    const t = setup();
    const u = await user(t);
    const s = await session(t, u);
    await t.ph.auth.disableUser(u.id);
    await expect(t.ph.auth.verifyAccessToken(s.accessToken)).rejects.toMatchObject({ code: 'invalid_token' });
    await expect(t.ph.auth.refresh({ refreshToken: s.refreshToken })).rejects.toMatchObject({
      code: 'invalid_token',
    });
    await expect(t.ph.auth.login({ email: u.email, password: u.password })).rejects.toMatchObject({
      code: 'invalid_credentials',
    });
    await t.ph.auth.enableUser(u.id);
    await session(t, u);
    await expect(t.ph.auth.disableUser('no-such-user')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('deleteUser ends every session and frees the email', async () => {
    const t = setup();
    const u = await user(t);
    const s = await session(t, u);
    await t.ph.auth.deleteUser(u.id);
    await expect(t.ph.auth.verifyAccessToken(s.accessToken)).rejects.toMatchObject({ code: 'invalid_token' });
    expect(await t.stores.users.findById(u.id)).toBeNull();
    await t.ph.auth.signup({ name: 'Again', email: u.email, password: STRONG_2 });
  });

  it('revokeSessions ends the sessions of one user, or of everyone', async () => {
    const t = setup();
    const a = await user(t);
    const b = await user(t);
    const sa = await session(t, a);
    const sb = await session(t, b);
    expect(await t.ph.auth.revokeSessions({ userId: a.id })).toEqual({ revoked: 1 });
    await expect(t.ph.auth.verifyAccessToken(sa.accessToken)).rejects.toMatchObject({
      code: 'invalid_token',
    });
    await t.ph.auth.verifyAccessToken(sb.accessToken);
    const sa2 = await session(t, a);
    expect(await t.ph.auth.revokeSessions({ all: true })).toEqual({ revoked: 2 });
    for (const token of [sa2.accessToken, sb.accessToken])
      await expect(t.ph.auth.verifyAccessToken(token)).rejects.toMatchObject({ code: 'invalid_token' });
  });

  it('roles come from the account; defaultRoles and setRoles change them', async () => {
    const t = setup({ defaultRoles: ['member'] });
    const u = await user(t);
    const p = await t.ph.auth.verifyAccessToken((await session(t, u)).accessToken);
    expect(await t.ph.auth.roles(p)).toEqual({ roles: ['member'] });
    await t.ph.auth.setRoles(u.id, ['member', 'admin']);
    expect(await t.ph.auth.roles(p)).toEqual({ roles: ['member', 'admin'] });
  });

  it('changePassword with keepOtherSessions leaves the other sessions alone', async () => {
    const t = setup();
    const u = await user(t);
    const s1 = await session(t, u);
    const s2 = await session(t, u);
    const p1 = await t.ph.auth.verifyAccessToken(s1.accessToken);
    await t.ph.auth.changePassword(p1, {
      currentPassword: u.password,
      newPassword: STRONG_2,
      keepOtherSessions: true,
    });
    await t.ph.auth.verifyAccessToken(s2.accessToken);
    const mail = await t.mailer.waitFor(u.email, (m) => /changed/.test(m.subject));
    expect(mail.text).toMatch(/stay signed in/);
  });

  it('a wrong current password counts as a failed login', async () => {
    const t = setup({ throttle: { 'login:email': { points: 2, durationSeconds: 900 } } });
    const u = await user(t);
    const p = await t.ph.auth.verifyAccessToken((await session(t, u)).accessToken);
    for (let i = 0; i < 2; i++)
      await expect(
        t.ph.auth.changePassword(p, { currentPassword: 'wrong-one-123', newPassword: STRONG_2 }),
      ).rejects.toMatchObject({ code: 'invalid_credentials' });
    await expect(
      t.ph.auth.changePassword(p, { currentPassword: u.password, newPassword: STRONG_2 }),
    ).rejects.toMatchObject({ code: 'rate_limited' });
  });
});

describe('requireFreshAuth', () => {
  async function principalOf(c: ReturnType<typeof context>) {
    const { user } = await c.area.api.signup({ name: 'Fresh', email: email(), password: STRONG });
    const s = await c.area.api.login({ email: user.email, password: STRONG });
    if (!('accessToken' in s)) throw new Error('unexpected MFA');
    return c.area.api.verifyAccessToken(s.accessToken);
  }

  it('passes within 10 minutes of the login without a password', async () => {
    const c = context();
    const p = await principalOf(c);
    c.clock.advance(10 * MIN);
    await requireFreshAuth(c.ctx, p);
    c.clock.advance(1000);
    await expect(requireFreshAuth(c.ctx, p)).rejects.toMatchObject({ code: 'reauth_required', status: 403 });
  });

  it('passes with the right password at any age, never with a wrong one', async () => {
    const c = context();
    const p = await principalOf(c);
    await expect(requireFreshAuth(c.ctx, p, 'not-the-password')).rejects.toMatchObject({
      code: 'reauth_required',
    });
    c.clock.advance(60 * MIN);
    await requireFreshAuth(c.ctx, p, STRONG);
  });

  it('with requirePassword ignores a fresh login', async () => {
    const c = context();
    const p = await principalOf(c);
    await expect(requireFreshAuth(c.ctx, p, undefined, { requirePassword: true })).rejects.toMatchObject({
      code: 'reauth_required',
    });
    await requireFreshAuth(c.ctx, p, STRONG, { requirePassword: true });
  });

  it('counts wrong passwords as failed logins of the account', async () => {
    const c = context();
    const p = await principalOf(c);
    for (let i = 0; i < 10; i++)
      await expect(requireFreshAuth(c.ctx, p, `wrong-${i}`)).rejects.toMatchObject({
        code: 'reauth_required',
      });
    await expect(requireFreshAuth(c.ctx, p, STRONG)).rejects.toMatchObject({ code: 'rate_limited' });
  });
});
