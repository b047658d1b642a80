import { describe, expect, it } from 'vitest';
import { webauthnVerifyBody } from '../src/mfa/schemas.js';

describe('WebAuthn body schemas', () => {
  const body = (clientExtensionResults?: unknown) => ({
    mfaToken: 'token',
    assertionResponse: {
      id: 'AAAA',
      rawId: 'AAAA',
      type: 'public-key',
      response: { clientDataJSON: 'AA', authenticatorData: 'AA', signature: 'AA' },
      ...(clientExtensionResults === undefined ? {} : { clientExtensionResults }),
    },
  });

  it('passes extension outputs through, known or new, and defaults them to {}', () => {
    expect(webauthnVerifyBody.safeParse(body()).data?.assertionResponse.clientExtensionResults).toEqual({});
    for (const ext of [{ credProps: { rk: true } }, { prf: { enabled: true } }, { someFutureExtension: 1 }])
      expect(webauthnVerifyBody.safeParse(body(ext)).success, JSON.stringify(ext)).toBe(true);
  });

  it('refuses extension outputs over 4 KiB (every other string in the body is capped too)', () => {
    const r = webauthnVerifyBody.safeParse(body({ ['k'.repeat(50_000)]: 'v'.repeat(40_000) }));
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.path).toEqual(['assertionResponse', 'clientExtensionResults']);
    // Bytes, not characters: 2,100 two-byte characters are over 4 KiB.
    expect(webauthnVerifyBody.safeParse(body({ x: 'é'.repeat(2100) })).success).toBe(false);
    expect(webauthnVerifyBody.safeParse(body({ x: 10n })).success).toBe(false);
  });
});
