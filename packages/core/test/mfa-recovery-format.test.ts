import { describe, expect, it } from 'vitest';
import { normalizeRecoveryCode } from '../src/mfa/recovery.js';

describe('recovery code input', () => {
  it('ignores case, dashes and spaces, and reads I and L as 1 and O as 0', () => {
    expect(normalizeRecoveryCode('7qkm-2x9d-hf3r-p0at')).toBe('7QKM2X9DHF3RP0AT');
    expect(normalizeRecoveryCode(' 7QKM 2X9D HF3R P0AT ')).toBe('7QKM2X9DHF3RP0AT');
    expect(normalizeRecoveryCode('7QKM-2X9D-HF3R-POAT')).toBe('7QKM2X9DHF3RP0AT');
    expect(normalizeRecoveryCode('ilIL-0000-0000-0000')).toBe('1111000000000000');
  });

  it('refuses anything that cannot be a recovery code', () => {
    for (const bad of [
      '',
      '123456',
      '7QKM-2X9D-HF3R-P0A',
      '7QKM-2X9D-HF3R-P0ATX',
      '7QKM-2X9D-HF3R-P0AU',
      'ÀQKM-2X9D-HF3R-P0AT',
    ]) {
      expect(normalizeRecoveryCode(bad)).toBeNull();
    }
  });
});
