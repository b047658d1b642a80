import { createSecretKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { decodeJwt, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { silentLogger } from '../../src/ports/logger.js';
import { createKeyring } from '../../src/tokens/keyring.js';
import { session, setup, user } from './setup.js';

const invalid = { code: 'invalid_token', status: 401 };

describe('access tokens', () => {
  it('carry typ at+jwt, iss, aud, sub, exp, iat, jti, sid, auth_time and amr', async () => {
    const t = setup();
    const u = await user(t);
    const s = await session(t, u);
    const c = decodeJwt(s.accessToken);
    expect(c).toMatchObject({
      iss: 'https://postern.test',
      aud: 'postern-test',
      sub: u.id,
      amr: ['pwd'],
    });
    expect(c.auth_time).toBe(Math.floor(t.clock.now().getTime() / 1000));
    expect(c.jti).toMatch(/^[0-9a-f-]{36}$/);
    const p = await t.ph.auth.verifyAccessToken(s.accessToken);
    expect(p).toMatchObject({ userId: u.id, sid: c.sid, jti: c.jti, authTime: c.auth_time, amr: ['pwd'] });
  });

  it('keep auth_time of the login across refreshes', async () => {
    const t = setup();
    const u = await user(t);
    const s = await session(t, u);
    t.clock.advance(20 * 60_000);
    const r = await t.ph.auth.refresh({ refreshToken: s.refreshToken });
    expect(decodeJwt(r.accessToken).auth_time).toBe(decodeJwt(s.accessToken).auth_time);
  });

  it('are refused when signed for another typ, audience or issuer by the same key', async () => {
    const keys = { alg: 'EdDSA' as const, key: generateKeyPairSync('ed25519').privateKey, kid: 'k1' };
    const t = setup({ keys });
    const u = await user(t);
    const s = await session(t, u);
    const { sid } = decodeJwt(s.accessToken);
    const forge = (issuer: string, typ: string, aud: string) =>
      createKeyring({ keys, issuer, logger: t.log.logger, clock: t.clock }).sign(
        { aud, sub: u.id, sid, jti: 'j' },
        typ,
        60,
      );
    await expect(
      t.ph.auth.verifyAccessToken(await forge('https://postern.test', 'mfa+jwt', 'postern-test')),
    ).rejects.toMatchObject(invalid);
    await expect(
      t.ph.auth.verifyAccessToken(await forge('https://postern.test', 'at+jwt', 'other')),
    ).rejects.toMatchObject(invalid);
    await expect(
      t.ph.auth.verifyAccessToken(await forge('https://evil.test', 'at+jwt', 'postern-test')),
    ).rejects.toMatchObject(invalid);
    // The same claims from the right issuer pass: the three checks above are what failed.
    await t.ph.auth.verifyAccessToken(await forge('https://postern.test', 'at+jwt', 'postern-test'));
  });

  it('are refused without one of the required claims', async () => {
    const keys = { alg: 'EdDSA' as const, key: generateKeyPairSync('ed25519').privateKey, kid: 'k1' };
    const t = setup({ keys });
    const ring = createKeyring({
      keys,
      issuer: 'https://postern.test',
      logger: t.log.logger,
      clock: t.clock,
    });
    const full = { aud: 'postern-test', sub: 'u1', sid: 's1', jti: 'j1' };
    await t.ph.auth.verifyAccessToken(await ring.sign(full, 'at+jwt', 60));
    for (const drop of ['sub', 'sid', 'jti'] as const) {
      const { [drop]: _, ...claims } = full;
      await expect(t.ph.auth.verifyAccessToken(await ring.sign(claims, 'at+jwt', 60))).rejects.toMatchObject(
        invalid,
      );
    }
  });

  it('are refused when signed by an unknown key, with another algorithm, or unsigned', async () => {
    const t = setup({ keys: { alg: 'EdDSA', key: generateKeyPairSync('ed25519').privateKey, kid: 'k1' } });
    const claims = { iss: 'https://postern.test', aud: 'postern-test', sub: 'u', sid: 's', jti: 'j' };
    const now = Math.floor(t.clock.now().getTime() / 1000);
    const strangerKey = generateKeyPairSync('ed25519').privateKey;
    const stranger = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: 'k1' })
      .setIssuedAt(now)
      .setExpirationTime(now + 60)
      .sign(strangerKey);
    await expect(t.ph.auth.verifyAccessToken(stranger)).rejects.toMatchObject(invalid);
    const hs = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid: 'k1' })
      .setIssuedAt(now)
      .setExpirationTime(now + 60)
      .sign(randomBytes(32));
    await expect(t.ph.auth.verifyAccessToken(hs)).rejects.toMatchObject(invalid);
    const none = `${Buffer.from('{"alg":"none","typ":"at+jwt"}').toString('base64url')}.${Buffer.from(JSON.stringify({ ...claims, iat: now, exp: now + 60 })).toString('base64url')}.`;
    await expect(t.ph.auth.verifyAccessToken(none)).rejects.toMatchObject(invalid);
  });

  it('keep verifying after a signing-key rotation while the old key stays configured', async () => {
    const k1 = {
      alg: 'ES256' as const,
      key: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
      kid: 'k1',
    };
    const k2 = {
      alg: 'ES256' as const,
      key: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
      kid: 'k2',
    };
    const first = setup({ keys: [k1] });
    const u = await user(first);
    const s = await session(first, u);
    const rotated = setup({ keys: [k2, k1] }, { stores: first.stores, clock: first.clock });
    await rotated.ph.auth.verifyAccessToken(s.accessToken);
    const jwks = await rotated.ph.jwks();
    expect(jwks.keys.map((k) => k.kid)).toEqual(['k2', 'k1']);
    const fresh = await session(rotated, u);
    expect(JSON.parse(Buffer.from(fresh.accessToken.split('.')[0]!, 'base64url').toString()).kid).toBe('k2');
  });

  it('refuse a key set where two keys share a kid (one would hide the other)', async () => {
    const key = () => generateKeyPairSync('ed25519').privateKey;
    const ring = (keys: Parameters<typeof createKeyring>[0]['keys']) =>
      createKeyring({
        keys,
        issuer: 'https://postern.test',
        logger: silentLogger,
        clock: { now: () => new Date() },
      });
    // Given kids at once; the same key twice (equal thumbprints) on first use.
    expect(() =>
      ring([
        { alg: 'EdDSA', key: key(), kid: 'k1' },
        { alg: 'EdDSA', key: key(), kid: 'k1' },
      ]),
    ).toThrow(/"k1" is used twice/);
    const same = key();
    await expect(ring([same, same]).jwks()).rejects.toThrow(/is used twice/);
  });

  it('take a bare KeyObject and sign with the algorithm its type names', async () => {
    for (const [key, alg] of [
      [generateKeyPairSync('ed25519').privateKey, 'EdDSA'],
      [generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey, 'ES256'],
      [createSecretKey(randomBytes(32)), 'HS256'],
    ] as const) {
      const t = setup({ keys: key });
      const s = await session(t, await user(t));
      expect(JSON.parse(Buffer.from(s.accessToken.split('.')[0]!, 'base64url').toString()).alg).toBe(alg);
      await t.ph.auth.verifyAccessToken(s.accessToken);
    }
  });

  it('refuse an unusable key when the instance is created, not at the first login', () => {
    const bad = [
      generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey,
      generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey,
      createSecretKey(randomBytes(16)),
      { alg: 'HS256', secret: 'short' },
      { alg: 'ES256', key: generateKeyPairSync('ed25519').privateKey },
      { alg: 'EdDSA', key: 'not a key' },
      { kty: 'OKP', crv: 'Ed25519', x: 'broken' },
      generateKeyPairSync('ed25519').publicKey,
      [generateKeyPairSync('ed25519').privateKey, createSecretKey(randomBytes(32))],
    ];
    for (const keys of bad) expect(() => setup({ keys: keys as never })).toThrow(ConfigError);
  });

  it('without keys: an ephemeral ES256 (P-256) key, announced by a warning, published in the JWKS', async () => {
    const t = setup();
    const s = await session(t, await user(t));
    expect(t.log.lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        fields: { event: 'config_warning', reason: 'ephemeral_key' },
        msg: expect.stringContaining('ephemeral ES256 (P-256) key'),
      }),
    );
    const { keys } = await t.ph.jwks();
    expect(keys).toEqual([
      {
        kty: 'EC',
        crv: 'P-256',
        x: expect.any(String),
        y: expect.any(String),
        kid: expect.any(String),
        alg: 'ES256',
        use: 'sig',
      },
    ]);
    const header = JSON.parse(Buffer.from(s.accessToken.split('.')[0]!, 'base64url').toString());
    expect(header).toEqual({ alg: 'ES256', typ: 'at+jwt', kid: keys[0]!.kid });
  });

  it('work with an HS256 secret of 32+ bytes, whose JWKS stays empty', async () => {
    const t = setup({ keys: { alg: 'HS256', secret: randomBytes(32) } });
    const u = await user(t);
    const s = await session(t, u);
    await t.ph.auth.verifyAccessToken(s.accessToken);
    expect(await t.ph.jwks()).toEqual({ keys: [] });
  });

  it('expire after 15 minutes (30 s clock tolerance) and follow accessTokenTtlSeconds', async () => {
    const t = setup();
    const u = await user(t);
    const s = await session(t, u);
    t.clock.advance(15 * 60_000 + 29_000);
    await t.ph.auth.verifyAccessToken(s.accessToken);
    t.clock.advance(2_000);
    await expect(t.ph.auth.verifyAccessToken(s.accessToken)).rejects.toMatchObject(invalid);
    const short = setup({ accessTokenTtlSeconds: 60 });
    const v = await user(short);
    const s2 = await session(short, v);
    expect(s2.expiresIn).toBe(60);
    const c = decodeJwt(s2.accessToken);
    expect(c.exp! - c.iat!).toBe(60);
  });
});
