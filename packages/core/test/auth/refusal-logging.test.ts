import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { setup, totpCode, totpUser } from './setup.js';

const IP = '192.0.2.77';
const fingerprint = (token: string) => createHash('sha256').update(token).digest('hex').slice(0, 12);
const forge = (jwt: string) => `${jwt.slice(0, -4)}${jwt.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;

type T = ReturnType<typeof setup>;

async function call(t: T, method: string, path: string, body?: object, authorization?: string) {
  const res = await t.ph.handle({
    method,
    path,
    headers: {
      'content-type': 'application/json',
      ...(authorization === undefined ? {} : { authorization }),
    },
    body: body === undefined ? undefined : Buffer.from(JSON.stringify(body)),
    ip: IP,
  });
  return { status: res!.status, body: res!.body ? JSON.parse(String(res!.body)) : undefined };
}

/** A TOTP user, a fresh pending login and its token (each in its own TOTP step). */
async function pendingLogin(t: T, u: { email: string; password: string }) {
  t.clock.advance(31_000);
  return (await call(t, 'POST', '/auth/login', { email: u.email, password: u.password })).body
    .mfaToken as string;
}

async function accessToken(t: T, u: Awaited<ReturnType<typeof totpUser>>) {
  const token = await pendingLogin(t, u);
  return (await call(t, 'POST', '/auth/mfa/verify', { token, code: totpCode(u.secret, t) })).body
    .accessToken as string;
}

/** The `warn` lines of one event. */
const warned = (t: T, event: string) =>
  t.log.lines.filter((l) => l.fields.event === event && l.level === 'warn').map((l) => l.fields);

describe('refusals are logged at warn with their reason, never with the token', () => {
  it('forged, wrong-type, malformed and expired Bearer tokens; no line without a header', async () => {
    const t = setup({ mfa: { encryptionKey: randomBytes(32) } });
    const u = await totpUser(t);
    const access = await accessToken(t, u);
    const forged = forge(access);
    const pending = await pendingLogin(t, u);
    expect((await call(t, 'GET', '/auth/me', undefined, `Bearer ${forged}`)).status).toBe(401);
    expect((await call(t, 'GET', '/auth/me', undefined, `Bearer ${pending}`)).status).toBe(401);
    expect((await call(t, 'GET', '/auth/me', undefined, 'Basic Zm9vOmJhcg==')).status).toBe(401);
    expect((await call(t, 'GET', '/auth/me')).status).toBe(401);
    t.clock.advance(16 * 60_000);
    expect((await call(t, 'GET', '/auth/me', undefined, `Bearer ${access}`)).status).toBe(401);

    const denied = warned(t, 'authorization_denied');
    expect(denied.map((f) => f.reason)).toEqual([
      'bad_signature',
      'wrong_type',
      'malformed_header',
      'expired',
    ]);
    expect(denied[0]).toMatchObject({
      outcome: 'failure',
      ip: IP,
      route: '/auth/me',
      tokenSha256: fingerprint(forged),
    });
    expect(denied[3]).toMatchObject({ tokenSha256: fingerprint(access) });
    // Another scheme's credentials (here Basic's password) are not hashed into the log.
    expect(denied[2]).not.toHaveProperty('tokenSha256');
    const text = JSON.stringify(t.log.lines);
    for (const secret of [forged, access, pending]) expect(text).not.toContain(secret);
  });

  it('forged, wrong-type, used and expired pending tokens (mfaToken)', async () => {
    const t = setup({ mfa: { encryptionKey: randomBytes(32) } });
    const u = await totpUser(t);
    const used = await pendingLogin(t, u);
    const access = (await call(t, 'POST', '/auth/mfa/verify', { token: used, code: totpCode(u.secret, t) }))
      .body.accessToken as string;
    const forged = forge(await pendingLogin(t, u));
    expect((await call(t, 'POST', '/auth/mfa/verify', { token: forged, code: '123456' })).status).toBe(401);
    expect((await call(t, 'POST', '/auth/mfa/verify', { token: access, code: '123456' })).status).toBe(401);
    expect((await call(t, 'POST', '/auth/mfa/verify', { token: used, code: '123456' })).status).toBe(401);
    const late = await pendingLogin(t, u);
    t.clock.advance(60 * 60_000);
    expect((await call(t, 'POST', '/auth/mfa/resend', { token: late })).status).toBe(401);

    const failed = warned(t, 'mfa_failed');
    expect(failed.map((f) => f.reason)).toEqual(['bad_signature', 'wrong_type', 'pending_ended', 'expired']);
    expect(failed[0]).toMatchObject({ ip: IP, route: '/auth/mfa/verify', tokenSha256: fingerprint(forged) });
    expect(failed[2]).toMatchObject({ userId: u.id, tokenSha256: fingerprint(used) });
    expect(failed[3]).toMatchObject({ route: '/auth/mfa/resend' });
    const text = JSON.stringify(t.log.lines);
    for (const secret of [forged, access, used, late]) expect(text).not.toContain(secret);
  });

  it('failed logins, wrong MFA codes, 429s and denied re-authentication', async () => {
    const t = setup({
      mfa: { encryptionKey: randomBytes(32) },
      throttle: { 'login:email+ip': { points: 2, durationSeconds: 900 } },
    });
    const u = await totpUser(t);
    const access = await accessToken(t, u);
    const token = await pendingLogin(t, u);
    expect((await call(t, 'POST', '/auth/mfa/verify', { token, code: '000000' })).status).toBe(401);
    for (let i = 0; i < 2; i++)
      expect(
        (await call(t, 'POST', '/auth/login', { email: u.email, password: 'wrong-password-1' })).status,
      ).toBe(401);
    expect(
      (await call(t, 'POST', '/auth/login', { email: u.email, password: 'wrong-password-1' })).status,
    ).toBe(429);
    expect((await call(t, 'DELETE', '/auth/mfa/totp', {}, `Bearer ${access}`)).status).toBe(403);

    expect(warned(t, 'mfa_failed')).toMatchObject([{ reason: 'wrong_code', ip: IP }]);
    expect(warned(t, 'login').map((f) => f.reason)).toEqual(['wrong_password', 'wrong_password']);
    expect(warned(t, 'rate_limited')).toMatchObject([{ reason: 'login:email+ip', ip: IP }]);
    expect(warned(t, 'authorization_denied').map((f) => f.reason)).toEqual(['password_required']);
  });
});
