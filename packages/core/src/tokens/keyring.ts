import {
  createPrivateKey,
  createPublicKey,
  createSecretKey,
  generateKeyPairSync,
  KeyObject,
} from 'node:crypto';
import {
  calculateJwkThumbprint,
  errors,
  exportJWK,
  type JWK,
  type JWTHeaderParameters,
  type JWTPayload,
  jwtVerify,
  SignJWT,
} from 'jose';
import { ConfigError, isPosternError, PosternError } from '../errors.js';
import type { Clock } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';
import { errorMessage } from '../util/error-message.js';

export type Algorithm = 'EdDSA' | 'ES256' | 'HS256';

/** One signing or verification key. The first configured key signs; every key verifies
 *  (so a new key can take over signing while tokens signed by the old one stay valid).
 *  A bare `KeyObject` names its algorithm by its type: P-256 -> ES256, Ed25519 -> EdDSA,
 *  a secret key -> HS256. */
export type KeyInput =
  | JWK
  | KeyObject
  | { kid?: string; alg: Algorithm; key: KeyObject }
  | { kid?: string; alg: 'HS256'; secret: string | Uint8Array };

interface LoadedKey {
  kid: string;
  alg: Algorithm;
  sign?: KeyObject;
  verify: KeyObject;
}

export interface Keyring {
  readonly alg: Promise<Algorithm>;
  sign(payload: JWTPayload, typ: string, expiresInSeconds: number): Promise<string>;
  /** Verifies with the one configured algorithm, the given `typ`, `iss` and `aud`. */
  verify(
    token: string,
    opts: { typ: string; audience: string; requiredClaims: string[] },
  ): Promise<JWTPayload>;
  jwks(): Promise<{ keys: JWK[] }>;
}

/** A key checked and typed, before its kid (a thumbprint needs an await) is known. */
type CheckedKey = Omit<LoadedKey, 'kid'> & { kid?: string; jwk?: JWK };

const UNSUPPORTED = 'use ES256 (P-256), EdDSA (Ed25519) or HS256 (a secret of 32+ bytes)';

function algOfJwk(jwk: JWK): Algorithm {
  if (jwk.alg === 'EdDSA' || jwk.alg === 'Ed25519' || (jwk.kty === 'OKP' && jwk.crv === 'Ed25519'))
    return 'EdDSA';
  if (jwk.alg === 'ES256' || (jwk.kty === 'EC' && jwk.crv === 'P-256')) return 'ES256';
  if (jwk.alg === 'HS256' || jwk.kty === 'oct') return 'HS256';
  throw new ConfigError(`Unsupported key: kty=${jwk.kty} alg=${jwk.alg}; ${UNSUPPORTED}`);
}

function algOfKeyObject(key: KeyObject): Algorithm {
  if (key.type === 'secret') return 'HS256';
  if (key.asymmetricKeyType === 'ed25519') return 'EdDSA';
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ES256';
  throw new ConfigError(`Unsupported key: ${key.asymmetricKeyType} ${key.type} key; ${UNSUPPORTED}`);
}

/** A KeyObject as a key of `alg` (by default the one its type names); a key of another type,
 *  or a secret under 32 bytes, is a ConfigError. */
function fromKeyObject(key: KeyObject, alg: Algorithm = algOfKeyObject(key)): CheckedKey {
  if (algOfKeyObject(key) !== alg) throw new ConfigError(`The key given for ${alg} is not a ${alg} key`);
  if (alg === 'HS256') {
    if ((key.symmetricKeySize ?? 0) < 32) throw new ConfigError('HS256 secrets must be at least 32 bytes');
    return { alg, sign: key, verify: key };
  }
  return key.type === 'private' ? { alg, sign: key, verify: createPublicKey(key) } : { alg, verify: key };
}

/** Checks one key synchronously, so a bad one is a ConfigError from `createPostern`. */
function check(input: KeyInput): CheckedKey {
  if (input instanceof KeyObject) return fromKeyObject(input);
  if (typeof input !== 'object' || input === null) throw new ConfigError(`Unsupported key; ${UNSUPPORTED}`);
  if ('kty' in input && typeof input.kty === 'string') {
    const jwk = input as JWK;
    const alg = algOfJwk(jwk);
    if (alg === 'HS256')
      return {
        ...fromKeyObject(createSecretKey(Buffer.from(jwk.k ?? '', 'base64url')), alg),
        kid: jwk.kid,
        jwk,
      };
    let key: KeyObject;
    try {
      key =
        jwk.d !== undefined
          ? createPrivateKey({ key: jwk as never, format: 'jwk' })
          : createPublicKey({ key: jwk as never, format: 'jwk' });
    } catch (e) {
      throw new ConfigError(`Unreadable ${alg} JWK: ${errorMessage(e)}`);
    }
    const { d: _d, ...pubJwk } = jwk;
    return { ...fromKeyObject(key, alg), kid: jwk.kid, jwk: pubJwk };
  }
  const kid = typeof input.kid === 'string' ? input.kid : undefined;
  if ('secret' in input) {
    if (typeof input.secret !== 'string' && !(input.secret instanceof Uint8Array))
      throw new ConfigError('An HS256 secret is a string or bytes');
    const bytes = typeof input.secret === 'string' ? Buffer.from(input.secret) : input.secret;
    return { ...fromKeyObject(createSecretKey(bytes), 'HS256'), kid };
  }
  const { key, alg } = input as { alg: Algorithm; key: unknown };
  if (!(key instanceof KeyObject)) throw new ConfigError('`key` must be a KeyObject (node:crypto)');
  return { ...fromKeyObject(key, alg), kid };
}

/** Why jose refused a token, for the log line of the refusal (never for the answer, which is
 *  one `invalid_token` whatever the reason). */
function refusalReason(e: unknown): string {
  if (isPosternError(e)) return e.reason ?? 'invalid';
  if (!(e instanceof errors.JOSEError)) return 'invalid';
  if (e instanceof errors.JWTExpired) return 'expired';
  if (e instanceof errors.JWTClaimValidationFailed) {
    if (e.reason === 'missing') return 'missing_claim';
    return (
      { typ: 'wrong_type', aud: 'wrong_audience', iss: 'wrong_issuer', nbf: 'not_yet_valid', iat: 'bad_iat' }[
        e.claim
      ] ?? 'bad_claim'
    );
  }
  if (e instanceof errors.JWSSignatureVerificationFailed) return 'bad_signature';
  if (e instanceof errors.JOSEAlgNotAllowed) return 'wrong_algorithm';
  return 'malformed';
}

/** Keys are looked up by kid: a repeated one would hide one of the two keys. */
function assertUniqueKids(kids: string[]): void {
  const seen = new Set<string>();
  for (const kid of kids) {
    if (seen.has(kid)) throw new ConfigError(`kid ${JSON.stringify(kid)} is used twice`);
    seen.add(kid);
  }
}

async function withKid(k: CheckedKey): Promise<LoadedKey> {
  const { jwk, kid, ...key } = k;
  if (kid !== undefined) return { ...key, kid };
  if (key.alg === 'HS256') return { ...key, kid: jwk ? await calculateJwkThumbprint(jwk) : 'hs256' };
  return { ...key, kid: await calculateJwkThumbprint(jwk ?? (await exportJWK(key.verify))) };
}

/** Checks the configured keys at once (a bad one is a ConfigError from `createPostern`);
 *  only thumbprint kids are computed lazily, so creation stays synchronous. Mixing algorithms
 *  is a ConfigError: one algorithm per deployment. */
export function createKeyring(opts: {
  keys?: KeyInput | KeyInput[];
  issuer: string;
  logger: Logger;
  clock: Clock;
}): Keyring {
  let inputs = opts.keys === undefined ? [] : Array.isArray(opts.keys) ? opts.keys : [opts.keys];
  if (inputs.length === 0) {
    opts.logger.warn(
      { event: 'config_warning', reason: 'ephemeral_key' },
      'no signing keys configured: using an ephemeral ES256 (P-256) key; tokens die with this process',
    );
    // ES256, not EdDSA: the JWKS stacks most Node services verify with (jsonwebtoken +
    // jwks-rsa, fast-jwt + get-jwks) verify ES256 and not EdDSA, so the default key's tokens
    // verify in a host's other services too.
    inputs = [generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey];
  }
  // Shapes, algorithms and sizes are checked here, synchronously: a bad key fails start-up.
  const checked = inputs.map(check);
  const alg = checked[0]!.alg;
  if (checked.some((k) => k.alg !== alg)) throw new ConfigError('All keys must use one algorithm');
  if (!checked[0]!.sign) throw new ConfigError('The first key must be a private (signing) key');
  // Given kids now; thumbprints once computed (the same key twice, or a kid equal to one).
  assertUniqueKids(checked.flatMap((k) => (k.kid === undefined ? [] : [k.kid])));

  const ready = (async () => {
    const loaded = await Promise.all(checked.map(withKid));
    assertUniqueKids(loaded.map((k) => k.kid));
    return { signer: loaded[0]!, byKid: new Map(loaded.map((k) => [k.kid, k])) };
  })();
  // Surface a ConfigError on first use, never as an unhandled rejection at start-up.
  ready.catch(() => {});

  return {
    alg: Promise.resolve(alg),
    async sign(payload, typ, expiresIn) {
      const { signer } = await ready;
      const now = Math.floor(opts.clock.now().getTime() / 1000);
      const iat = typeof payload.iat === 'number' ? payload.iat : now;
      return new SignJWT(payload)
        .setProtectedHeader({ alg: signer.alg, typ, kid: signer.kid })
        .setIssuer(opts.issuer)
        .setIssuedAt(iat)
        .setExpirationTime(iat + expiresIn)
        .sign(signer.sign!);
    },
    async verify(token, v) {
      const { byKid } = await ready;
      try {
        const { payload } = await jwtVerify(
          token,
          (header: JWTHeaderParameters) => {
            const key = header.kid === undefined ? undefined : byKid.get(header.kid);
            if (!key) throw new PosternError('invalid_token', { reason: 'unknown_key' });
            return key.verify;
          },
          {
            algorithms: [alg],
            issuer: opts.issuer,
            audience: v.audience,
            typ: v.typ,
            clockTolerance: 30,
            currentDate: opts.clock.now(),
            requiredClaims: v.requiredClaims,
          },
        );
        return payload;
      } catch (e) {
        throw new PosternError('invalid_token', { reason: refusalReason(e) });
      }
    },
    async jwks() {
      const { byKid } = await ready;
      if (alg === 'HS256') return { keys: [] };
      const keys: JWK[] = [];
      for (const k of byKid.values()) {
        const { d: _d, ...pub } = await exportJWK(k.verify);
        keys.push({ ...pub, kid: k.kid, alg: k.alg, use: 'sig' });
      }
      return { keys };
    },
  };
}
