import type { MfaMethod } from '@postern/core';
import { describe, expect, it } from 'vitest';
import type { MfaGate } from '../../src/context.js';
import { authContext, email, STRONG, STRONG_2 } from './setup.js';

/** An MFA gate that records what the auth area asks of it (the MFA area's side is tested there). */
function recordingGate(methods: MfaMethod[]) {
  const calls: Array<[string, unknown]> = [];
  const gate: MfaGate = {
    async methods(userId) {
      calls.push(['methods', userId]);
      return methods;
    },
    async begin(user, opts) {
      calls.push(['begin', { userId: user.id, ...opts }]);
      return { mfaRequired: true, mfaToken: 'pending-token', methods: [...opts.methods, 'recovery'] };
    },
    async voidPending(userId) {
      calls.push(['voidPending', userId]);
    },
  };
  return { gate, calls };
}

describe('login with MFA on', () => {
  it('after a correct password hands over to the MFA gate with the refresh flag and address', async () => {
    const { gate, calls } = recordingGate(['totp', 'email']);
    const c = authContext({ mfa: gate });
    const address = email();
    const { user } = await c.area.api.signup({ name: 'Mfa', email: address, password: STRONG });
    const answer = await c.area.api.login(
      { email: address, password: STRONG, refreshToken: true },
      { ip: '192.0.2.8' },
    );
    expect(answer).toEqual({
      mfaRequired: true,
      mfaToken: 'pending-token',
      methods: ['totp', 'email', 'recovery'],
    });
    expect(calls).toContainEqual([
      'begin',
      { userId: user.id, refresh: true, methods: ['totp', 'email'], meta: { ip: '192.0.2.8' } },
    ]);
    expect(await c.ctx.stores.sessions.listForUser(user.id, c.clock.now())).toEqual([]);
  });

  it('never reaches the gate with a wrong password', async () => {
    const { gate, calls } = recordingGate(['totp']);
    const c = authContext({ mfa: gate });
    const address = email();
    await c.area.api.signup({ name: 'Mfa', email: address, password: STRONG });
    await expect(c.area.api.login({ email: address, password: 'wrong-password' })).rejects.toMatchObject({
      code: 'invalid_credentials',
    });
    expect(calls.filter(([k]) => k === 'begin' || k === 'methods')).toEqual([]);
  });

  it('password reset and change void pending MFA logins', async () => {
    const { gate, calls } = recordingGate([]);
    const c = authContext({ mfa: gate });
    const address = email();
    const { user } = await c.area.api.signup({ name: 'Mfa', email: address, password: STRONG });
    const s = await c.area.api.login({ email: address, password: STRONG });
    if (!('accessToken' in s)) throw new Error('unexpected MFA');
    const p = await c.area.api.verifyAccessToken(s.accessToken);
    await c.area.api.changePassword(p, { currentPassword: STRONG, newPassword: STRONG_2 });
    expect(calls.filter(([k]) => k === 'voidPending')).toEqual([['voidPending', user.id]]);
    await c.area.api.forgot({ email: address });
    const mail = await c.mailer.waitFor(address, (m) => /reset code/i.test(m.subject));
    await c.area.api.forgotReset({ code: /Reset code: (\S+)/.exec(mail.text)![1]!, password: STRONG });
    expect(calls.filter(([k]) => k === 'voidPending')).toHaveLength(2);
  });

  it('the session issuer gives MFA logins their amr and carries a refresh token only when asked', async () => {
    const c = authContext();
    const address = email();
    const { user } = await c.area.api.signup({ name: 'Mfa', email: address, password: STRONG });
    const seen = (await c.ctx.stores.users.findById(user.id))!;
    const { sid, answer: without } = (await c.ctx.sessions.issue(seen, {
      refresh: false,
      amr: ['pwd', 'otp'],
      ip: '192.0.2.9',
    }))!;
    expect(without.refreshToken).toBeUndefined();
    const p = await c.area.api.verifyAccessToken(without.accessToken);
    expect(p).toMatchObject({ amr: ['pwd', 'otp'], sid });
    const { answer: withRefresh } = (await c.ctx.sessions.issue(seen, {
      refresh: true,
      amr: ['pwd', 'hwk'],
      ip: '192.0.2.9',
    }))!;
    expect(withRefresh.refreshToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await c.ctx.sessions.endAll(user.id, { reason: 'mfa_change', exceptSid: p.sid });
    await c.area.api.verifyAccessToken(without.accessToken);
    await expect(c.area.api.verifyAccessToken(withRefresh.accessToken)).rejects.toMatchObject({
      code: 'invalid_token',
    });
  });
});
