import {
  createPrivateKey,
  createPublicKey,
  createSecretKey,
  generateKeyPairSync,
  type KeyObject,
} from 'node:crypto';
import {
  calculateJwkThumbprint,
  exportJWK,
  type JWK,
  type JWTHeaderParameters,
  type JWTPayload,
  jwtVerify,
  SignJWT,
} from 'jose';
import { ConfigError, GatehouseError } from '../errors.js';
import type { Clock } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';

export type Algorithm = 'EdDSA' | 'ES256' | 'HS256';

/** One signing or verification key. The first configured key signs; every key verifies
 *  (so a new key can take over signing while tokens signed by the old one stay valid). */
export type KeyInput =
  | JWK
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

function algOfJwk(jwk: JWK): Algorithm {
  if (jwk.alg === 'EdDSA' || jwk.alg === 'Ed25519' || (jwk.kty === 'OKP' && jwk.crv === 'Ed25519'))
    return 'EdDSA';
  if (jwk.alg === 'ES256' || (jwk.kty === 'EC' && jwk.crv === 'P-256')) return 'ES256';
  if (jwk.alg === 'HS256' || jwk.kty === 'oct') return 'HS256';
  throw new ConfigError(
    `Unsupported key: kty=${jwk.kty} alg=${jwk.alg}; use EdDSA (Ed25519), ES256 or HS256`,
  );
}

async function load(input: KeyInput): Promise<LoadedKey> {
  if ('kty' in input && typeof input.kty === 'string') {
    const jwk = input as JWK;
    const alg = algOfJwk(jwk);
    if (alg === 'HS256') {
      const key = createSecretKey(Buffer.from(jwk.k ?? '', 'base64url'));
      if (key.symmetricKeySize !== undefined && key.symmetricKeySize < 32)
        throw new ConfigError('HS256 secrets must be at least 32 bytes');
      return { kid: jwk.kid ?? (await calculateJwkThumbprint(jwk)), alg, sign: key, verify: key };
    }
    const isPrivate = 'd' in jwk && jwk.d !== undefined;
    const key = isPrivate
      ? createPrivateKey({ key: jwk as never, format: 'jwk' })
      : createPublicKey({ key: jwk as never, format: 'jwk' });
    const pub = isPrivate ? createPublicKey(key) : key;
    const { d: _d, ...pubJwk } = jwk;
    return {
      kid: jwk.kid ?? (await calculateJwkThumbprint(pubJwk)),
      alg,
      sign: isPrivate ? key : undefined,
      verify: pub,
    };
  }
  if ('secret' in input) {
    const key = createSecretKey(typeof input.secret === 'string' ? Buffer.from(input.secret) : input.secret);
    if ((key.symmetricKeySize ?? 0) < 32) throw new ConfigError('HS256 secrets must be at least 32 bytes');
    return { kid: input.kid ?? 'hs256', alg: 'HS256', sign: key, verify: key };
  }
  const { key, alg } = input as { kid?: string; alg: Algorithm; key: KeyObject };
  if (alg === 'HS256') return { kid: input.kid ?? 'hs256', alg, sign: key, verify: key };
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  const kid = input.kid ?? (await calculateJwkThumbprint(await exportJWK(pub)));
  return { kid, alg, sign: key.type === 'private' ? key : undefined, verify: pub };
}

/** Loads the configured keys once (lazily, so `createGatehouse` stays synchronous).
 *  Mixing algorithms is a ConfigError: one algorithm per deployment. */
export function createKeyring(opts: {
  keys?: KeyInput | KeyInput[];
  issuer: string;
  logger: Logger;
  clock: Clock;
}): Keyring {
  const ready = (async () => {
    let inputs = opts.keys === undefined ? [] : Array.isArray(opts.keys) ? opts.keys : [opts.keys];
    if (inputs.length === 0) {
      opts.logger.warn(
        { event: 'config_warning', reason: 'ephemeral_key' },
        'no signing keys configured: using an ephemeral Ed25519 key; tokens die with this process',
      );
      inputs = [{ alg: 'EdDSA', key: generateKeyPairSync('ed25519').privateKey }];
    }
    const loaded = await Promise.all(inputs.map(load));
    const alg = loaded[0]!.alg;
    if (loaded.some((k) => k.alg !== alg)) throw new ConfigError('All keys must use one algorithm');
    if (!loaded[0]!.sign) throw new ConfigError('The first key must be a private (signing) key');
    // Keys are looked up by kid: a repeated one would hide one of the two keys.
    const seen = new Set<string>();
    for (const { kid } of loaded) {
      if (seen.has(kid)) throw new ConfigError(`kid ${JSON.stringify(kid)} is used twice`);
      seen.add(kid);
    }
    return { alg, signer: loaded[0]!, byKid: new Map(loaded.map((k) => [k.kid, k])) };
  })();
  // Surface a ConfigError on first use, never as an unhandled rejection at start-up
  // (that includes `alg`, a promise of its own that nobody may ever await).
  ready.catch(() => {});
  const alg = ready.then((r) => r.alg);
  alg.catch(() => {});

  return {
    alg,
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
      const { alg, byKid } = await ready;
      try {
        const { payload } = await jwtVerify(
          token,
          (header: JWTHeaderParameters) => {
            const key = header.kid === undefined ? undefined : byKid.get(header.kid);
            if (!key) throw new GatehouseError('invalid_token');
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
      } catch {
        throw new GatehouseError('invalid_token');
      }
    },
    async jwks() {
      const { alg, byKid } = await ready;
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
