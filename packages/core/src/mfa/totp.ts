import { generate, verify } from 'otplib';
import { base32Encode } from './base32.js';

/** RFC 6238 as authenticator apps use it: HMAC-SHA-1, 6 digits, 30 s steps, T0 = 0. */
export const TOTP_PERIOD = 30;
export const TOTP_DIGITS = 6;
/** 20 bytes = 160 bits, the HMAC-SHA-1 block-friendly size RFC 4226 recommends. */
export const TOTP_SEED_BYTES = 20;

export type TotpAlgorithm = 'sha1' | 'sha256' | 'sha512';

/** The code for `epochSeconds` (tests and vectors use other digits and algorithms). */
export function totpCode(
  seed: Uint8Array,
  epochSeconds: number,
  opts: { digits?: 6 | 7 | 8; algorithm?: TotpAlgorithm } = {},
): Promise<string> {
  return generate({
    secret: seed,
    epoch: epochSeconds,
    period: TOTP_PERIOD,
    digits: opts.digits ?? TOTP_DIGITS,
    algorithm: opts.algorithm ?? 'sha1',
  });
}

/** Checks `code` at `epochSeconds` ± one step. Returns the matching time step, or null.
 *  Steps at or before `afterStep` are refused (a code works once). */
export async function verifyTotp(
  seed: Uint8Array,
  code: string,
  epochSeconds: number,
  afterStep = -1,
): Promise<number | null> {
  if (!/^\d{6}$/.test(code)) return null;
  const r = await verify({
    secret: seed,
    token: code,
    epoch: epochSeconds,
    period: TOTP_PERIOD,
    digits: TOTP_DIGITS,
    algorithm: 'sha1',
    epochTolerance: TOTP_PERIOD,
    ...(afterStep >= 0 ? { afterTimeStep: afterStep } : {}),
  });
  return r.valid && 'timeStep' in r ? r.timeStep : null;
}

/** The otpauth:// URI an authenticator app scans (Key URI Format). */
export function otpauthUri(seed: Uint8Array, issuer: string, account: string): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  const q = new URLSearchParams({
    secret: base32Encode(seed),
    issuer,
    algorithm: 'SHA1',
    digits: String(TOTP_DIGITS),
    period: String(TOTP_PERIOD),
  });
  return `otpauth://totp/${label}?${q.toString().replaceAll('+', '%20')}`;
}
