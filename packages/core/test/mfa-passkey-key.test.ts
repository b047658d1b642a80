import { generateKeyPairSync } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import { describe, expect, it } from 'vitest';
import { usablePublicKey } from '../src/mfa/passkey-key.js';

const bytes = (b64u: string) => new Uint8Array(Buffer.from(b64u, 'base64url'));
const coseKey = (entries: Array<[number, number | Uint8Array]>) =>
  new Uint8Array(isoCBOR.encode(new Map(entries)));

// COSE keys as authenticators send them (RFC 9053): kty 1, alg 3, then the type's parameters.
const ec2 = (x: Uint8Array, y: Uint8Array, crv = 1) =>
  coseKey([
    [1, 2],
    [3, -7],
    [-1, crv],
    [-2, x],
    [-3, y],
  ]);
const okp = (x: Uint8Array) =>
  coseKey([
    [1, 1],
    [3, -8],
    [-1, 6],
    [-2, x],
  ]);
const rsa = (n: Uint8Array, e: Uint8Array) =>
  coseKey([
    [1, 3],
    [3, -257],
    [-1, n],
    [-2, e],
  ]);

const ecKey = () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
const edKey = () => generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' });

describe('passkey public keys', () => {
  it('accepts ES256, EdDSA and RS256 keys', () => {
    const ec = ecKey();
    const r = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'jwk' });
    expect(usablePublicKey(ec2(bytes(ec.x!), bytes(ec.y!)))).toBe(true);
    expect(usablePublicKey(okp(bytes(edKey().x!)))).toBe(true);
    expect(usablePublicKey(rsa(bytes(r.n!), bytes(r.e!)))).toBe(true);
  });

  it('refuses a point off its curve, a truncated key, an unknown curve or key type, and junk', () => {
    const ec = ecKey();
    expect(usablePublicKey(ec2(bytes(ec.x!), new Uint8Array(32).fill(7)))).toBe(false);
    expect(usablePublicKey(okp(bytes(edKey().x!).slice(1)))).toBe(false);
    expect(usablePublicKey(ec2(bytes(ec.x!), bytes(ec.y!), 8))).toBe(false);
    expect(
      usablePublicKey(
        coseKey([
          [1, 7],
          [3, -7],
        ]),
      ),
    ).toBe(false);
    expect(usablePublicKey(new Uint8Array([0xff, 0x00, 0x13]))).toBe(false);
  });
});
