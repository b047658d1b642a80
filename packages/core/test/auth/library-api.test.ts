import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { email, STRONG, session, setup, totpCode, totpUser, user } from './setup.js';

/** `ph.auth` holds every auth flow, MFA included, as a plain async function. */
describe('ph.auth as a library', () => {
  it('enrols TOTP and completes an MFA login without HTTP', async () => {
    const t = setup({ mfa: { encryptionKey: randomBytes(32) } });
    const address = email('lib');
    await t.ph.auth.signup({ name: 'Lib', email: address, password: STRONG });
    const first = await t.ph.auth.login({ email: address, password: STRONG });
    if (!('accessToken' in first)) throw new Error('expected a session');
    const principal = await t.ph.auth.verifyAccessToken(first.accessToken);

    const { secret } = await t.ph.mfa.totpSetup(principal);
    const { recoveryCodes } = await t.ph.mfa.totpConfirm(principal, { code: totpCode(secret, t) });
    expect(recoveryCodes).toHaveLength(10);

    t.clock.advance(30_000);
    const pending = await t.ph.auth.login({ email: address, password: STRONG, refreshToken: true });
    if (!('mfaRequired' in pending)) throw new Error('expected a pending login');
    await expect(t.ph.mfa.verifyMfa({ token: pending.mfaToken, code: '000000' })).rejects.toMatchObject({
      code: 'invalid_code',
    });
    const done = await t.ph.mfa.verifyMfa({ token: pending.mfaToken, code: totpCode(secret, t) });
    expect(done).toMatchObject({ tokenType: 'Bearer', refreshToken: expect.any(String) });
    const { sid } = await t.ph.auth.verifyAccessToken(done.accessToken);
    expect(t.log.lines.map((e) => e.fields).find((e) => e.event === 'mfa_verified')).toMatchObject({
      userId: principal.userId,
      sid,
      method: 'totp',
    });

    const again = await t.ph.auth.login({ email: address, password: STRONG });
    if (!('mfaRequired' in again)) throw new Error('expected a pending login');
    await t.ph.mfa.verifyRecoveryCode({ token: again.mfaToken, code: recoveryCodes![0]! });

    await expect(t.ph.mfa.disableMfaMethod(principal, 'totp')).rejects.toMatchObject({
      code: 'reauth_required',
    });
    await t.ph.mfa.disableMfaMethod(principal, 'totp', { password: STRONG });
    expect(await t.ph.mfa.summary(principal.userId)).toMatchObject({ enabled: false });
  });

  it('refuses methodType recovery with 400, nothing counted, once every recovery code is used', async () => {
    const t = setup({ mfa: { encryptionKey: randomBytes(32) } });
    const { email: address, secret, recoveryCodes } = await totpUser(t);
    const pendingLogin = async () => {
      const p = await t.ph.auth.login({ email: address, password: STRONG });
      if (!('mfaRequired' in p)) throw new Error('expected a pending login');
      return p;
    };
    for (const code of recoveryCodes!)
      await t.ph.mfa.verifyRecoveryCode({ token: (await pendingLogin()).mfaToken, code });

    const spent = await pendingLogin();
    expect(spent.methods).toEqual(['totp']);
    const unoffered = { code: 'validation_failed', status: 400 };
    await expect(
      t.ph.mfa.verifyMfa({ token: spent.mfaToken, code: recoveryCodes![0]!, methodType: 'recovery' }),
    ).rejects.toMatchObject(unoffered);
    await expect(
      t.ph.mfa.verifyRecoveryCode({ token: spent.mfaToken, code: recoveryCodes![1]! }),
    ).rejects.toMatchObject({
      ...unoffered,
      errors: [{ path: 'token' }],
    });
    // Six refusals, none counted: the pending login (5 wrong tries) still completes.
    for (let i = 0; i < 4; i++)
      await expect(
        t.ph.mfa.verifyMfa({ token: spent.mfaToken, code: recoveryCodes![2]!, methodType: 'recovery' }),
      ).rejects.toMatchObject(unoffered);
    t.clock.advance(30_000);
    await expect(
      t.ph.mfa.verifyMfa({ token: spent.mfaToken, code: totpCode(secret, t) }),
    ).resolves.toMatchObject({
      tokenType: 'Bearer',
    });
  });

  it('with mfa.required, enrols the first method during the login and completes it', async () => {
    const t = setup({ mfa: { encryptionKey: randomBytes(32), required: true } });
    const address = email('req');
    await t.ph.auth.signup({ name: 'Req', email: address, password: STRONG });
    const pending = await t.ph.auth.login({ email: address, password: STRONG });
    if (!('mfaRequired' in pending)) throw new Error('expected a pending login');
    expect(pending.methods).toEqual([]);
    const { secret } = await t.ph.mfa.enrolTotpSetup({ mfaToken: pending.mfaToken });
    const done = await t.ph.mfa.enrolTotpConfirm({ mfaToken: pending.mfaToken, code: totpCode(secret, t) });
    expect(done).toMatchObject({ tokenType: 'Bearer', recoveryCodes: expect.any(Array) });
    const principal = await t.ph.auth.verifyAccessToken(done.accessToken);
    expect(await t.ph.mfa.summary(principal.userId)).toMatchObject({ enabled: true });
  });

  it('rejects a bad input with the HTTP error code, never throwing synchronously', async () => {
    const t = setup();
    const calls: Array<() => Promise<unknown>> = [
      () => t.ph.auth.signup({ name: 'x', email: 'nope', password: STRONG }),
      () => t.ph.auth.login({} as never),
      () => t.ph.auth.refresh({} as never),
      () => t.ph.auth.logout({} as never),
      () => t.ph.auth.forgot({ email: 'nope' }),
      () => t.ph.auth.forgotReset({ code: '', password: '' }),
      () => t.ph.mfa.verifyMfa({} as never),
      () => t.ph.mfa.resendCode({} as never),
    ];
    for (const call of calls) {
      let result: Promise<unknown> | undefined;
      expect(() => {
        result = call();
      }).not.toThrow();
      await expect(result).rejects.toMatchObject({ code: 'validation_failed', status: 400 });
    }
  });

  it('requireFreshAuth guards a host route: a fresh login or the password, else 403', async () => {
    const t = setup();
    const u = await user(t);
    const principal = await t.ph.auth.verifyAccessToken((await session(t, u)).accessToken);
    await expect(t.ph.auth.requireFreshAuth(principal)).resolves.toBeUndefined();
    await expect(t.ph.auth.requireFreshAuth(principal, { requirePassword: true })).rejects.toMatchObject({
      code: 'reauth_required',
    });
    t.clock.advance(11 * 60_000);
    await expect(t.ph.auth.requireFreshAuth(principal)).rejects.toMatchObject({ code: 'reauth_required' });
    await expect(
      t.ph.auth.requireFreshAuth(principal, { password: 'not-the-password-1' }),
    ).rejects.toMatchObject({
      code: 'reauth_required',
    });
    await expect(t.ph.auth.requireFreshAuth(principal, { password: STRONG })).resolves.toBeUndefined();
    await expect(t.ph.auth.requireFreshAuth(principal, { password: 'x'.repeat(129) })).rejects.toMatchObject({
      code: 'validation_failed',
    });
    expect(
      t.log.lines.filter((e) => e.fields.event === 'authorization_denied').map((e) => e.fields.reason),
    ).toEqual(['password_required', 'stale_auth', 'wrong_password']);
  });

  it('refuses an unknown top-level option (a misspelt stores would keep users in memory)', async () => {
    const { createPostern, ConfigError } = await import('@postern/core');
    expect(() => createPostern({ issuer: 'https://x.test', audience: 'x', store: {} } as never)).toThrow(
      ConfigError,
    );
    expect(() => createPostern({ issuer: 'https://x.test', audience: 'x', store: {} } as never)).toThrow(
      /unknown option\(s\) store$/,
    );
    // In the option groups too: a misspelt encryptionKey would seal TOTP seeds with a throwaway key.
    expect(() =>
      createPostern({
        issuer: 'https://x.test',
        audience: 'x',
        mfa: { encryptonKey: 'k' },
        outbox: { concurrency: 2, maxAttempt: 3 },
      } as never),
    ).toThrow(/unknown option\(s\) mfa\.encryptonKey, outbox\.maxAttempt$/);
    expect(() =>
      createPostern({ issuer: 'https://x.test', audience: 'x', mfa: { required: false }, webhook: {} }),
    ).not.toThrow();
  });
});
