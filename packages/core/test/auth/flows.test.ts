import { decodeJwt, decodeProtectedHeader } from 'jose';
import { describe, expect, it } from 'vitest';
import { STRONG, session, setup, user } from './setup.js';

describe('auth flows (library API)', () => {
  it('signs up, logs in, reads the user and refreshes', async () => {
    const t = setup();
    const u = await user(t);
    const s = await session(t, u);
    expect(s).toMatchObject({ tokenType: 'Bearer', expiresIn: 900 });
    const p = await t.ph.auth.verifyAccessToken(s.accessToken);
    expect(p.userId).toBe(u.id);
    const me = await t.ph.auth.me(p);
    expect(me.user).toMatchObject({ id: u.id, email: u.email, roles: ['user'], emailVerified: false });
    expect(me.user.mfa).toEqual({ enabled: false, methods: [] });
    const r = await t.ph.auth.refresh({ refreshToken: s.refreshToken });
    expect(r.refreshToken).not.toBe(s.refreshToken);
    await t.ph.close();
  });

  it('issues access tokens with the documented header and claims', async () => {
    const t = setup();
    const u = await user(t);
    const s = await session(t, u);
    expect(decodeProtectedHeader(s.accessToken)).toMatchObject({ alg: 'ES256', typ: 'at+jwt' });
    const c = decodeJwt(s.accessToken);
    expect(c).toMatchObject({
      iss: 'https://postern.test',
      aud: 'postern-test',
      sub: u.id,
      amr: ['pwd'],
    });
    for (const k of ['exp', 'iat', 'jti', 'sid', 'auth_time']) expect(c[k]).toBeDefined();
    expect(c.exp! - c.iat!).toBe(900);
    expect(STRONG).toBeTypeOf('string');
  });
});
