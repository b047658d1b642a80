import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { ConfigError } from '../errors.js';
import type { Logger } from '../ports/logger.js';
import type { SealedSecret } from '../ports/mfa-factor-store.js';
import type { SealingKeyInput } from './options.js';

/** Seals small secrets (TOTP seeds) with AES-256-GCM: random 96-bit IV, the owner's user id
 *  as additional data (a sealed seed copied to another user does not open), key id kept. */
export interface Sealer {
  seal(plain: Uint8Array, aad: string): SealedSecret;
  /** Throws when the key is unknown or the data was tampered with. */
  open(sealed: SealedSecret, aad: string): Uint8Array;
}

interface Key {
  kid: string;
  key: Buffer;
}

function keyBytes(v: Uint8Array | string): Buffer {
  const b = typeof v === 'string' ? Buffer.from(v, /[-_]/.test(v) ? 'base64url' : 'base64') : Buffer.from(v);
  if (b.length !== 32) throw new ConfigError('mfa.encryptionKey must be 32 bytes (AES-256)');
  return b;
}

function toKey(input: SealingKeyInput): Key {
  if (typeof input === 'object' && !(input instanceof Uint8Array)) {
    if (!input.kid) throw new ConfigError('mfa.encryptionKey: kid must not be empty');
    return { kid: input.kid, key: keyBytes(input.key) };
  }
  const key = keyBytes(input);
  // A stable id derived from the key, so the same configured key always opens its seeds.
  return { kid: createHash('sha256').update(key).digest('base64url').slice(0, 12), key };
}

export function createSealer(input: SealingKeyInput | SealingKeyInput[] | undefined, logger: Logger): Sealer {
  let keys = (input === undefined ? [] : Array.isArray(input) ? input : [input]).map(toKey);
  if (keys.length === 0) {
    logger.warn(
      { event: 'config_warning', reason: 'ephemeral_mfa_key' },
      'no mfa.encryptionKey configured: TOTP seeds are sealed with an ephemeral key and die with this process',
    );
    keys = [{ kid: `ephemeral-${randomBytes(6).toString('base64url')}`, key: randomBytes(32) }];
  }
  const byKid = new Map(keys.map((k) => [k.kid, k]));
  if (byKid.size !== keys.length) throw new ConfigError('mfa.encryptionKey: duplicate kid');
  const sealer = keys[0]!;
  return {
    seal(plain, aad) {
      const iv = randomBytes(12);
      const c = createCipheriv('aes-256-gcm', sealer.key, iv);
      c.setAAD(Buffer.from(aad, 'utf8'));
      const data = Buffer.concat([c.update(plain), c.final(), c.getAuthTag()]);
      return { kid: sealer.kid, iv: iv.toString('base64url'), data: data.toString('base64url') };
    },
    open(sealed, aad) {
      const k = byKid.get(sealed.kid);
      if (!k) throw new Error(`TOTP seed sealed with unknown key id ${sealed.kid}`);
      const iv = Buffer.from(sealed.iv, 'base64url');
      const all = Buffer.from(sealed.data, 'base64url');
      if (iv.length !== 12 || all.length < 17) throw new Error('sealed secret is malformed');
      const d = createDecipheriv('aes-256-gcm', k.key, iv);
      d.setAAD(Buffer.from(aad, 'utf8'));
      d.setAuthTag(all.subarray(all.length - 16));
      return new Uint8Array(Buffer.concat([d.update(all.subarray(0, all.length - 16)), d.final()]));
    },
  };
}
