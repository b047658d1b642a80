import { randomBytes, randomInt } from 'node:crypto';
import type { RecoveryCode } from '../ports/recovery-code-store.js';
import type { Stores } from '../ports/stores.js';
import type { MfaEnv } from './env.js';

// Crockford base32: no I, L, O, U, so codes read aloud and typed by hand survive.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** 16 characters = 80 bits; the first 4 are a non-secret selector, so even with the store
 *  leaked 60 bits stay behind Argon2id (the checklist asks >= 50). */
const LENGTH = 16;
const SELECTOR = 4;
export const RECOVERY_CODE_COUNT = 10;

function randomCode(): string {
  let s = '';
  for (let i = 0; i < LENGTH; i++) s += ALPHABET[randomInt(0, 32)];
  return s;
}

/** Shown form: XXXX-XXXX-XXXX-XXXX. */
const format = (c: string) => c.match(/.{4}/g)!.join('-');

/** Canonical form of what a person typed: upper case, no dashes or spaces, I/L read as 1 and
 *  O as 0. Null when it cannot be a recovery code. */
export function normalizeRecoveryCode(input: string): string | null {
  const c = input.toUpperCase().replace(/[\s-]/g, '').replace(/[IL]/g, '1').replace(/O/g, '0');
  if (c.length !== LENGTH) return null;
  for (const ch of c) if (!ALPHABET.includes(ch)) return null;
  return c;
}

/** A fresh set: the codes to show once, and the rows to store (Argon2id hashes). */
async function newRecoveryCodes(
  env: MfaEnv,
  userId: string,
): Promise<{ shown: string[]; rows: RecoveryCode[] }> {
  const codes: string[] = [];
  const selectors = new Set<string>();
  while (codes.length < RECOVERY_CODE_COUNT) {
    const c = randomCode();
    const sel = c.slice(0, SELECTOR);
    if (selectors.has(sel)) continue;
    selectors.add(sel);
    codes.push(c);
  }
  const now = env.ctx.clock.now();
  const hashes = await Promise.all(codes.map((c) => env.ctx.passwords.hash(c)));
  const rows: RecoveryCode[] = codes.map((c, i) => ({
    id: randomBytes(12).toString('base64url'),
    userId,
    selector: c.slice(0, SELECTOR),
    hash: hashes[i]!,
    createdAt: now,
  }));
  return { shown: codes.map(format), rows };
}

/** A new set replacing the old one (the old codes die). */
export async function replaceRecoveryCodes(env: MfaEnv, userId: string): Promise<string[]> {
  const { shown, rows } = await newRecoveryCodes(env, userId);
  await env.ctx.stores.recoveryCodes.replaceAll(userId, rows);
  return shown;
}

/** How a factor's confirmation also stores the recovery codes of a first factor, inside the
 *  factor's own transaction: MFA never turns on without its codes, and codes never exist for a
 *  factor that did not commit. */
export interface FirstCodes {
  /** Stores the set only when the user has none (of two first factors confirmed at once only
   *  one shows codes, and those work); the codes to show, or null when another set was there. */
  store(tx: Stores): Promise<string[] | null>;
}

/** The set of a first factor, hashed now (Argon2id holds no connection or transaction open):
 *  call it once the code is known to be right, just before the factor's transaction. */
export async function firstRecoveryCodes(env: MfaEnv, userId: string): Promise<FirstCodes> {
  const { shown, rows } = await newRecoveryCodes(env, userId);
  return { store: async (tx) => ((await tx.recoveryCodes.addIfNone(userId, rows)) ? shown : null) };
}

/** No codes to store: the user already had a factor. */
export const NO_CODES: FirstCodes = { store: async () => null };

/** Checks a recovery code without using it: Argon2id check of the one stored code with its
 *  selector. Returns how to use it up (atomic single use; the number of codes left, or null
 *  when a parallel attempt used it first), or null when it does not match. */
export async function matchRecoveryCode(
  env: MfaEnv,
  userId: string,
  input: string,
): Promise<{ use: () => Promise<number | null> } | null> {
  const code = normalizeRecoveryCode(input);
  if (!code) return null;
  const { recoveryCodes } = env.ctx.stores;
  const unused = await recoveryCodes.listUnused(userId);
  const candidate = unused.find((r) => r.selector === code.slice(0, SELECTOR));
  // Without a candidate the same Argon2 work still runs, so timing tells nothing.
  const ok = await env.ctx.passwords.verify(candidate ? { passwordHash: candidate.hash } : null, code);
  if (!ok || !candidate) return null;
  return {
    use: async () => ((await recoveryCodes.use(userId, candidate.id)) ? unused.length - 1 : null),
  };
}
