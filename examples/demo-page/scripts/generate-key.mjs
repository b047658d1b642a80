// Prints a new Ed25519 private JWK (one line) for JWT_PRIVATE_KEYS:
//   JWT_PRIVATE_KEYS="$(node examples/demo-page/scripts/generate-key.mjs)"
// Its kid is the RFC 7638 thumbprint, the kid the keyring would compute anyway.
import { createHash, generateKeyPairSync } from 'node:crypto';

const jwk = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
const kid = createHash('sha256')
  .update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x }))
  .digest('base64url');
console.log(JSON.stringify({ kty: jwk.kty, crv: jwk.crv, x: jwk.x, d: jwk.d, kid, alg: 'EdDSA' }));
