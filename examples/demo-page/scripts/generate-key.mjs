// Prints a new private JWK (one line) for JWT_PRIVATE_KEYS:
//   JWT_PRIVATE_KEYS="$(node examples/demo-page/scripts/generate-key.mjs)"          # ES256 (P-256)
//   JWT_PRIVATE_KEYS="$(node examples/demo-page/scripts/generate-key.mjs EdDSA)"    # Ed25519
// ES256 by default: the JWKS stacks other services verify with (jsonwebtoken + jwks-rsa,
// fast-jwt + get-jwks) verify ES256 and not EdDSA. Its kid is the RFC 7638 thumbprint, the
// kid the keyring would compute anyway.
import { createHash, generateKeyPairSync } from 'node:crypto';

const alg = process.argv[2] ?? 'ES256';
/** The RFC 7638 members of each key type, in their lexicographic order. */
const kinds = {
  ES256: {
    generate: () => generateKeyPairSync('ec', { namedCurve: 'P-256' }),
    members: ['crv', 'kty', 'x', 'y'],
  },
  EdDSA: { generate: () => generateKeyPairSync('ed25519'), members: ['crv', 'kty', 'x'] },
};
const kind = Object.hasOwn(kinds, alg) ? kinds[alg] : undefined;
if (!kind) {
  console.error(`usage: generate-key.mjs [ES256|EdDSA] (got ${JSON.stringify(alg)})`);
  process.exit(1);
}

const jwk = kind.generate().privateKey.export({ format: 'jwk' });
const pub = Object.fromEntries(kind.members.map((m) => [m, jwk[m]]));
const kid = createHash('sha256').update(JSON.stringify(pub)).digest('base64url');
console.log(JSON.stringify({ ...pub, d: jwk.d, kid, alg }));
