import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as OTPAuth from 'otpauth';
import { describe, expect, it } from 'vitest';
import { base32Encode } from '../src/mfa/base32.js';
import { otpauthUri, totpCode, verifyTotp } from '../src/mfa/totp.js';

interface Vector {
  time: number;
  totp: string;
  mode: 'SHA1' | 'SHA256' | 'SHA512';
}
const fixture = JSON.parse(
  readFileSync(new URL('./fixtures/totp/rfc6238.json', import.meta.url), 'utf8'),
) as { seeds: Record<string, { hex: string }>; vectors: Vector[] };

describe('TOTP', () => {
  it.each(fixture.vectors)('reproduces the RFC 6238 vector at $time s ($mode)', async (v) => {
    const seed = Buffer.from(fixture.seeds[v.mode]!.hex, 'hex');
    const algorithm = v.mode.toLowerCase() as 'sha1' | 'sha256' | 'sha512';
    expect(await totpCode(seed, v.time, { digits: 8, algorithm })).toBe(v.totp);
  });

  it('agrees with the independent otpauth package on random seeds and times', async () => {
    for (let i = 0; i < 50; i++) {
      const seed = randomBytes(20);
      const t = 1_000_000_000 + i * 7919;
      const ref = new OTPAuth.TOTP({
        secret: OTPAuth.Secret.fromBase32(base32Encode(seed)),
        algorithm: 'SHA1',
        digits: 6,
        period: 30,
      });
      const code = ref.generate({ timestamp: t * 1000 });
      expect(await totpCode(seed, t)).toBe(code);
      expect(await verifyTotp(seed, code, t)).toBe(Math.floor(t / 30));
    }
  });

  it('accepts one step either side and refuses two', async () => {
    const seed = randomBytes(20);
    const t = 1_700_000_015;
    const step = Math.floor(t / 30);
    expect(await verifyTotp(seed, await totpCode(seed, t - 30), t)).toBe(step - 1);
    expect(await verifyTotp(seed, await totpCode(seed, t + 30), t)).toBe(step + 1);
    expect(await verifyTotp(seed, await totpCode(seed, t - 60), t)).toBeNull();
    expect(await verifyTotp(seed, await totpCode(seed, t + 60), t)).toBeNull();
  });

  it('refuses a code whose step is not after the last accepted one', async () => {
    const seed = randomBytes(20);
    const t = 1_700_000_015;
    const code = await totpCode(seed, t);
    const step = Math.floor(t / 30);
    expect(await verifyTotp(seed, code, t, step)).toBeNull();
    expect(await verifyTotp(seed, code, t, step - 1)).toBe(step);
  });

  it('refuses malformed codes without throwing', async () => {
    const seed = randomBytes(20);
    for (const c of ['', '12345', '1234567', 'abcdef', '12 345', '１２３４５６']) {
      expect(await verifyTotp(seed, c, 1_700_000_000)).toBeNull();
    }
  });

  it('builds an otpauth URI that the otpauth package parses back to the same seed', () => {
    const seed = randomBytes(20);
    const uri = otpauthUri(seed, 'Gate House', 'ann+x@example.com');
    const parsed = OTPAuth.URI.parse(uri) as OTPAuth.TOTP;
    expect(parsed.issuer).toBe('Gate House');
    expect(parsed.label).toBe('ann+x@example.com');
    expect(parsed.secret.base32).toBe(base32Encode(seed));
    expect(parsed.digits).toBe(6);
    expect(parsed.period).toBe(30);
    expect(parsed.algorithm).toBe('SHA1');
  });
});
