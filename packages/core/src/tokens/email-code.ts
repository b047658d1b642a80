import { createHash, randomInt } from 'node:crypto';
import type { EmailCodeStore } from '../ports/email-code-store.js';

/** Six digits from the CSPRNG, zero-padded. */
export function newEmailCode(): string {
  return String(randomInt(0, 1_000_000)).padStart(6, '0');
}

/** True for the shape of a mailed code (six ASCII digits). */
export const isEmailCode = (code: string): boolean => /^\d{6}$/.test(code);

/** Codes are stored as SHA-256 over the key they are bound to and the code, so a stored hash
 *  is only good for its own purpose (a pending login, an enrolment, a verification). */
export function hashEmailCode(key: string, code: string): string {
  return createHash('sha256').update(`${key}\n${code}`).digest('hex');
}

/** Stores a fresh code under `key` (replacing the key's previous code) and returns it, for the
 *  caller to mail. `hashKey` is what the hash binds the code to (default: the key). */
export async function storeEmailCode(
  codes: EmailCodeStore,
  c: { key: string; userId: string; now: Date; ttlSeconds: number; hashKey?: string },
): Promise<string> {
  const code = newEmailCode();
  await codes.put({
    key: c.key,
    userId: c.userId,
    codeHash: hashEmailCode(c.hashKey ?? c.key, code),
    createdAt: c.now,
    expiresAt: new Date(c.now.getTime() + c.ttlSeconds * 1000),
  });
  return code;
}
