import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { email, STRONG_2, session, setup, totpCode, user } from './setup.js';

const FIELDS = ['event', 'outcome', 'reason', 'userId', 'sid', 'ip', 'route', 'requestId'];

describe('security logging', () => {
  it('logs login, refresh, reuse, logout, reset and password change with structured fields', async () => {
    const t = setup();
    const u = await user(t);
    await expect(
      t.ph.auth.login({ email: u.email, password: 'Wr0ng-Sekret-value' }, { ip: '192.0.2.3' }),
    ).rejects.toThrow();
    await expect(
      t.ph.auth.login({ email: email(), password: 'Wr0ng-Sekret-value' }, { ip: '192.0.2.3' }),
    ).rejects.toThrow();
    const s = await session(t, u);
    const first = await t.ph.auth.verifyAccessToken(s.accessToken);
    const r = await t.ph.auth.refresh({ refreshToken: s.refreshToken });
    await t.ph.auth.refresh({ refreshToken: s.refreshToken }).catch(() => {});
    const s2 = await session(t, u);
    await t.ph.auth.logout({ refreshToken: s2.refreshToken });
    const p = await t.ph.auth.verifyAccessToken((await session(t, u)).accessToken);
    await t.ph.auth.changePassword(p, { currentPassword: u.password, newPassword: STRONG_2 });
    await t.ph.auth.forgot({ email: u.email });
    const code = /Reset code: (\S+)/.exec(
      (await t.mailer.waitFor(u.email, (m) => /reset/i.test(m.subject))).text,
    )![1]!;
    await t.ph.auth.forgotReset({ code, password: u.password });

    const events = t.log.lines.map((e) => e.fields);
    const find = (event: string, outcome: string, reason?: string) =>
      events.find(
        (e) => e.event === event && e.outcome === outcome && (reason === undefined || e.reason === reason),
      );
    expect(find('login', 'failure', 'wrong_password')).toMatchObject({
      userId: u.id,
      ip: '192.0.2.3',
      factor: 'password',
    });
    expect(find('login', 'failure', 'unknown_email')).toMatchObject({ userId: null, ip: '192.0.2.3' });
    expect(find('login', 'success')).toMatchObject({ userId: u.id, sid: first.sid });
    expect(find('refresh', 'success')).toMatchObject({ userId: u.id, sid: expect.any(String) });
    expect(find('refresh_reuse', 'failure')).toMatchObject({ userId: u.id, sid: expect.any(String) });
    expect(find('logout', 'success')).toMatchObject({ userId: u.id });
    expect(find('password_change', 'success')).toMatchObject({ userId: u.id });
    expect(find('password_reset', 'success')).toMatchObject({ userId: u.id });
    for (const e of events) {
      for (const k of FIELDS)
        if (e.event !== 'rate_limited' && e.event !== 'config_warning')
          expect(e, String(e.event)).toHaveProperty(k);
    }
    // Messages are constant; nothing secret appears anywhere in the log.
    const text = JSON.stringify(t.log.lines);
    for (const secret of [
      u.password,
      STRONG_2,
      'Wr0ng-Sekret-value',
      s.refreshToken,
      r.refreshToken!,
      s.accessToken,
      code,
      u.email,
    ])
      expect(text).not.toContain(secret);
    void r;
  });

  it('logs MFA challenges, failures, logins and changes with the route, request id and address', async () => {
    const t = setup({ mfa: { encryptionKey: randomBytes(32) } });
    const u = await user(t);
    const ip = '192.0.2.44';
    const call = async (method: string, path: string, body?: object, bearer?: string) => {
      const res = await t.ph.handle({
        method,
        path,
        headers: {
          'content-type': 'application/json',
          ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
        },
        body: Buffer.from(body ? JSON.stringify(body) : ''),
        ip,
      });
      return { status: res!.status, body: res!.body ? JSON.parse(String(res!.body)) : undefined };
    };
    const totp = (secret: string) => totpCode(secret, t);
    const bearer = (await session(t, u)).accessToken;
    const { secret } = (await call('POST', '/auth/mfa/totp/setup', undefined, bearer)).body;
    expect((await call('POST', '/auth/mfa/totp/confirm', { code: totp(secret) }, bearer)).status).toBe(200);
    t.clock.advance(30_000);
    const { mfaToken } = (await call('POST', '/auth/login', { email: u.email, password: u.password })).body;
    expect((await call('POST', '/auth/mfa/verify', { token: mfaToken, code: '000000' })).status).toBe(401);
    expect((await call('POST', '/auth/mfa/verify', { token: mfaToken, code: totp(secret) })).status).toBe(
      200,
    );
    expect((await call('DELETE', '/auth/mfa/totp', {}, bearer)).status).toBe(403);
    expect((await call('DELETE', '/auth/mfa/totp', { password: u.password }, bearer)).status).toBe(204);
    // A Bearer token of a session that ended (the removal ended the others) is refused and logged.
    const other = (await session(t, u)).accessToken;
    expect(
      (await call('DELETE', '/auth/sessions', undefined, (await session(t, u)).accessToken)).status,
    ).toBe(204);
    expect((await call('GET', '/auth/me', undefined, other)).status).toBe(401);

    const events = t.log.lines.map((e) => e.fields);
    const expected: Array<[string, string, string]> = [
      ['mfa_enrolled', 'success', 'POST /auth/mfa/totp/confirm'],
      ['mfa_challenge', 'pending', 'POST /auth/login'],
      ['mfa_failed', 'failure', 'POST /auth/mfa/verify'],
      ['mfa_verified', 'success', 'POST /auth/mfa/verify'],
      // Logged under the route's pattern, as every route with a parameter is.
      ['authorization_denied', 'failure', 'DELETE /auth/mfa/:method'],
      ['mfa_removed', 'success', 'DELETE /auth/mfa/:method'],
      ['authorization_denied', 'failure', 'GET /auth/me'],
    ];
    for (const [event, outcome, route] of expected) {
      const e = events.find(
        (x) => x.event === event && String(x.route).endsWith(route.split(' ')[1]!.slice(5)),
      );
      expect(e, event).toMatchObject({ outcome, userId: u.id, ip, requestId: expect.any(String) });
      expect(String(e!.route), event).toContain(route.split(' ')[1]!.slice('/auth'.length));
      for (const k of FIELDS) expect(e, event).toHaveProperty(k);
    }
  });

  it('logs an inbox access refusal with the route, request id, address and session', async () => {
    const t = setup();
    const owner = await user(t);
    const stranger = await user(t);
    const account = await t.ph.inbox.createAccount(owner.id, {
      address: `inbox-${owner.id}@acme.test`,
      name: 'Support',
    });
    const bearer = (await session(t, stranger)).accessToken;
    const { sid } = await t.ph.auth.verifyAccessToken(bearer);
    const res = await t.ph.handle({
      method: 'GET',
      path: `/inbox/accounts/${account.id}/threads`,
      headers: { authorization: `Bearer ${bearer}` },
      ip: '192.0.2.45',
    });
    expect(res?.status).toBe(403);
    const e = t.log.lines.map((x) => x.fields).find((x) => x.event === 'authorization_denied');
    expect(e).toMatchObject({
      outcome: 'failure',
      reason: 'inbox_member_required',
      userId: stranger.id,
      sid,
      ip: '192.0.2.45',
      route: '/inbox/accounts/:id/threads',
      requestId: expect.any(String),
    });
  });
});
