import type { Clock } from '../ports/clock.js';
import type { ResetCode, ResetCodeStore } from '../ports/reset-code-store.js';
import { hasEnded, sweepEvery } from './expiry.js';

/** At most one code per user: creating one replaces the user's previous code. Ended codes are
 *  swept every 256th create.
 *  A real store: a unique row per user replaced in one statement, and `consume` as one
 *  `DELETE ... RETURNING` where the code is live, so two processes cannot both use it. */
export function memoryResetCodeStore(clock: Clock): ResetCodeStore {
  const byHash = new Map<string, ResetCode>();
  const hashByUser = new Map<string, string>();

  const live = (hash: string, now: Date): ResetCode | null => {
    const c = byHash.get(hash);
    return c && !hasEnded(c.expiresAt, now) ? c : null;
  };
  const remove = (c: ResetCode) => {
    byHash.delete(c.hash);
    if (hashByUser.get(c.userId) === c.hash) hashByUser.delete(c.userId);
  };
  const sweep = sweepEvery((now) => {
    for (const c of byHash.values()) if (hasEnded(c.expiresAt, now)) remove(c);
  });

  return {
    async create(code) {
      const previous = hashByUser.get(code.userId);
      if (previous !== undefined) byHash.delete(previous);
      byHash.set(code.hash, structuredClone(code));
      hashByUser.set(code.userId, code.hash);
      sweep(clock.now());
    },
    async find(hash, now) {
      const c = live(hash, now);
      return c ? structuredClone(c) : null;
    },
    async consume(hash, now) {
      const c = live(hash, now);
      if (!c) return null;
      remove(c);
      return structuredClone(c);
    },
    async voidForUser(userId) {
      const hash = hashByUser.get(userId);
      const c = hash === undefined ? undefined : byHash.get(hash);
      if (c) remove(c);
    },
  };
}
