import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { cose, decodeCredentialPublicKey } from '@simplewebauthn/server/helpers';

const b64u = (v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('base64url') : undefined);

/** COSE curve -> JWK curve of EC2 keys. */
const EC_CURVES: Partial<Record<number, string>> = {
  [cose.COSECRV.P256]: 'P-256',
  [cose.COSECRV.P384]: 'P-384',
  [cose.COSECRV.P521]: 'P-521',
};

/** The JWK of a COSE public key of a type Postern accepts (EC2, OKP, RSA); null otherwise. */
function toJwk(key: Map<number, unknown>): JsonWebKey | null {
  const { COSEKEYS, COSEKTY } = cose;
  const kty = key.get(COSEKEYS.kty);
  const crv = key.get(COSEKEYS.crv) as number;
  if (kty === COSEKTY.EC2) {
    const name = EC_CURVES[crv];
    return name ? { kty: 'EC', crv: name, x: b64u(key.get(COSEKEYS.x)), y: b64u(key.get(COSEKEYS.y)) } : null;
  }
  if (kty === COSEKTY.OKP && crv === cose.COSECRV.ED25519) {
    return { kty: 'OKP', crv: 'Ed25519', x: b64u(key.get(COSEKEYS.x)) };
  }
  if (kty === COSEKTY.RSA) return { kty: 'RSA', n: b64u(key.get(COSEKEYS.n)), e: b64u(key.get(COSEKEYS.e)) };
  return null;
}

/** Whether a credential's COSE public key can ever verify an assertion. The attestation check
 *  (format "none") does not load the key, so an EC point off its curve or a truncated key
 *  would otherwise be stored, turn MFA on, and then fail every login. Node refuses both when
 *  it loads the key. */
export function usablePublicKey(coseKey: Uint8Array<ArrayBuffer>): boolean {
  try {
    // Read as a plain map: the library's key types narrow `get` to kty and alg.
    const jwk = toJwk(decodeCredentialPublicKey(coseKey) as unknown as Map<number, unknown>);
    if (!jwk) return false;
    createPublicKey({ key: jwk, format: 'jwk' });
    return true;
  } catch {
    return false;
  }
}
