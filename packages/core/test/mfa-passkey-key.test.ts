import { generateKeyPairSync } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import { describe, expect, it } from 'vitest';
import { usablePublicKey } from '../src/mfa/passkey-key.js';

const bytes = (b64u: string) => new Uint8Array(Buffer.from(b64u, 'base64url'));
const coseKey = (entries: Array<[number, number | Uint8Array]>) =>
  new Uint8Array(isoCBOR.encode(new Map(entries)));

function keyOf(type: 'ec' | 'ed25519' | 'rsa') {
  const { publicKey } =
    type === 'ec'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : type === 'rsa'
        ? generateKeyPairSync('rsa', { modulusLength: 2048 })
        : generateKeyPairSync('ed25519');
  return publicKey.export({ format: 'jwk' });
}

describe('passkey public keys', () => {
  it('accepts ES256, EdDSA and RS256 keys as authenticators send them', () => {
    const ec = keyOf('ec');
    const ed = keyOf('ed25519');
    const rsa = keyOf('rsa');
    expect(
      usablePublicKey(
        coseKey([
          [1, 2],
          [3, -7],
          [-1, 1],
          [-2, bytes(ec.x!)],
          [-3, bytes(ec.y!)],
        ]),
      ),
    ).toBe(true);
    expect(
      usablePublicKey(
        coseKey([
          [1, 1],
          [3, -8],
          [-1, 6],
          [-2, bytes(ed.x!)],
        ]),
      ),
    ).toBe(true);
    expect(
      usablePublicKey(
        coseKey([
          [1, 3],
          [3, -257],
          [-1, bytes(rsa.n!)],
          [-2, bytes(rsa.e!)],
        ]),
      ),
    ).toBe(true);
  });

  it('refuses a point off its curve, a truncated key, an unknown curve or key type, and junk', () => {
    const ec = keyOf('ec');
    const ed = keyOf('ed25519');
    const offCurve = new Uint8Array(32).fill(7);
    expect(
      usablePublicKey(
        coseKey([
          [1, 2],
          [3, -7],
          [-1, 1],
          [-2, bytes(ec.x!)],
          [-3, offCurve],
        ]),
      ),
    ).toBe(false);
    expect(
      usablePublicKey(
        coseKey([
          [1, 1],
          [3, -8],
          [-1, 6],
          [-2, bytes(ed.x!).slice(1)],
        ]),
      ),
    ).toBe(false);
    expect(
      usablePublicKey(
        coseKey([
          [1, 2],
          [3, -7],
          [-1, 8],
          [-2, bytes(ec.x!)],
          [-3, bytes(ec.y!)],
        ]),
      ),
    ).toBe(false);
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
