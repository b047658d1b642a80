import { randomBytes } from 'node:crypto';
import { recordingLogger } from '@postern/testkit';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/errors.js';
import { createSealer } from '../src/mfa/seal.js';
import { silentLogger as quiet } from '../src/ports/logger.js';

describe('TOTP seed sealing (AES-256-GCM)', () => {
  it('opens what it sealed, with a fresh 96-bit IV every time and the key id kept', () => {
    const sealer = createSealer({ kid: 'k1', key: randomBytes(32) }, quiet);
    const seed = new Uint8Array(randomBytes(20));
    const a = sealer.seal(seed, 'user-1');
    const b = sealer.seal(seed, 'user-1');
    expect(a.kid).toBe('k1');
    expect(Buffer.from(a.iv, 'base64url')).toHaveLength(12);
    expect(a.iv).not.toBe(b.iv);
    expect(a.data).not.toBe(b.data);
    expect(Buffer.from(a.data, 'base64url')).toHaveLength(20 + 16);
    expect(Buffer.from(sealer.open(a, 'user-1'))).toEqual(Buffer.from(seed));
  });

  it('refuses to open a seed under another user id (the user id is the additional data)', () => {
    const sealer = createSealer(randomBytes(32), quiet);
    const sealed = sealer.seal(new Uint8Array(randomBytes(20)), 'user-1');
    expect(() => sealer.open(sealed, 'user-2')).toThrow();
  });

  it('refuses tampered ciphertext, tag or IV', () => {
    const sealer = createSealer(randomBytes(32), quiet);
    const sealed = sealer.seal(new Uint8Array(randomBytes(20)), 'u');
    const flip = (s: string, i: number) => {
      const b = Buffer.from(s, 'base64url');
      b[i]! ^= 1;
      return b.toString('base64url');
    };
    expect(() => sealer.open({ ...sealed, data: flip(sealed.data, 0) }, 'u')).toThrow();
    expect(() => sealer.open({ ...sealed, data: flip(sealed.data, 35) }, 'u')).toThrow();
    expect(() => sealer.open({ ...sealed, iv: flip(sealed.iv, 0) }, 'u')).toThrow();
  });

  it('rotates: the first key seals, older keys still open their seeds, unknown ids are refused', () => {
    const oldKey = { kid: 'old', key: randomBytes(32) };
    const before = createSealer(oldKey, quiet).seal(new Uint8Array([1, 2, 3]), 'u');
    const after = createSealer([{ kid: 'new', key: randomBytes(32).toString('base64') }, oldKey], quiet);
    expect(Array.from(after.open(before, 'u'))).toEqual([1, 2, 3]);
    expect(after.seal(new Uint8Array([4]), 'u').kid).toBe('new');
    expect(() => createSealer({ kid: 'other', key: randomBytes(32) }, quiet).open(before, 'u')).toThrow(
      /unknown key/,
    );
  });

  it('gives a key without an id a stable id, so a restart with the same key opens old seeds', () => {
    const key = randomBytes(32).toString('base64url');
    const sealed = createSealer(key, quiet).seal(new Uint8Array([9]), 'u');
    expect(Array.from(createSealer(key, quiet).open(sealed, 'u'))).toEqual([9]);
  });

  it('refuses keys that are not 32 bytes and duplicate key ids at start-up', () => {
    expect(() => createSealer(randomBytes(16), quiet)).toThrow(ConfigError);
    expect(() => createSealer('c2hvcnQ=', quiet)).toThrow(ConfigError);
    const k = { kid: 'same', key: randomBytes(32) };
    expect(() => createSealer([k, k], quiet)).toThrow(ConfigError);
  });

  it('without a configured key uses an ephemeral one and warns', () => {
    const { logger, warnings } = recordingLogger();
    const sealer = createSealer(undefined, logger);
    const sealed = sealer.seal(new Uint8Array([5]), 'u');
    expect(sealed.kid).toMatch(/^ephemeral-/);
    expect(Array.from(sealer.open(sealed, 'u'))).toEqual([5]);
    expect(warnings()).toEqual([expect.objectContaining({ reason: 'ephemeral_mfa_key' })]);
    expect(() => createSealer(undefined, logger).open(sealed, 'u')).toThrow(/unknown key/);
  });
});
