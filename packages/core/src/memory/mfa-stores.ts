import { timingSafeEqual } from 'node:crypto';
import type { EmailCode } from '../ports/email-code-store.js';
import type { MfaFactor, PendingTotp } from '../ports/mfa-factor-store.js';
import type { MfaMethod } from '../ports/mfa-method.js';
import type { MfaStores } from '../ports/mfa-stores.js';
import type { PendingLogin } from '../ports/pending-login-store.js';
import type { RecoveryCode } from '../ports/recovery-code-store.js';
import type { WebAuthnChallenge } from '../ports/webauthn-challenge-store.js';
import type { StoredWebAuthnCredential } from '../ports/webauthn-credential-store.js';
import { dropEnded, hasEnded, sweepEvery } from './expiry.js';

// Every method below reads and writes without an `await` in between: that is its atomicity.
// Values are copied in and out so callers never share state with the store.

const copy = <T>(v: T): T => structuredClone(v);

function sameHex(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Deletes the entries of `map` that belong to `userId`; returns how many. */
function dropOf<V extends { userId: string }>(map: Map<string, V>, userId: string): number {
  let n = 0;
  for (const [k, v] of map) {
    if (v.userId === userId) {
      map.delete(k);
      n++;
    }
  }
  return n;
}

/** The MFA stores, plus `dropUser` for the user store: everything kept under a user id.
 *  Pending logins, email codes, challenges and unconfirmed TOTP seeds are swept every 256th
 *  write of a pending login or code.
 *  A real store: single use as one `DELETE ... RETURNING` (or a conditional update) per code,
 *  challenge, recovery code and TOTP step, so two processes cannot both accept one; indexes
 *  by user for listing and for dropping a user's rows; expired rows deleted in the background. */
export function memoryMfaStores(): MfaStores & { dropUser(userId: string): void } {
  const factors = new Map<string, MfaFactor>(); // `${userId}:${type}`
  const pendingTotp = new Map<string, PendingTotp>(); // userId
  const pending = new Map<string, PendingLogin>(); // jti
  const codes = new Map<string, EmailCode>(); // key
  const recovery = new Map<string, RecoveryCode[]>(); // userId
  const credentials = new Map<string, StoredWebAuthnCredential>(); // credential id
  const challenges = new Map<string, WebAuthnChallenge>(); // `${purpose}:${subject}`

  // Expired entries nobody asks for again are swept now and then, so memory stays bounded.
  const sweep = sweepEvery((now) => {
    dropEnded(pending, (p) => p.expiresAt, now);
    dropEnded(codes, (c) => c.expiresAt, now);
    dropEnded(challenges, (c) => c.expiresAt, now);
    dropEnded(pendingTotp, (p) => p.expiresAt, now);
  });

  const livePending = (jti: string, now: Date) => {
    const p = pending.get(jti);
    if (!p) return null;
    if (hasEnded(p.expiresAt, now)) {
      pending.delete(jti);
      return null;
    }
    return p;
  };

  const liveCode = (key: string, codeHash: string, now: Date) => {
    const c = codes.get(key);
    return !!c && !hasEnded(c.expiresAt, now) && sameHex(c.codeHash, codeHash);
  };

  return {
    dropUser(userId) {
      dropOf(factors, userId);
      pendingTotp.delete(userId);
      dropOf(pending, userId);
      dropOf(codes, userId);
      recovery.delete(userId);
      dropOf(credentials, userId);
      dropOf(challenges, userId);
    },

    mfaFactors: {
      async listFactors(userId) {
        return [...factors.values()].filter((f) => f.userId === userId).map(copy);
      },
      async listMethods(userId) {
        const methods: MfaMethod[] = [...factors.values()]
          .filter((f) => f.userId === userId)
          .map((f) => f.type);
        for (const c of credentials.values()) {
          if (c.userId === userId) {
            methods.push('webauthn');
            break;
          }
        }
        return methods;
      },
      async getFactor(userId, type) {
        const f = factors.get(`${userId}:${type}`);
        return f ? copy(f) : null;
      },
      async enableFactor(factor) {
        factors.set(`${factor.userId}:${factor.type}`, copy(factor));
      },
      async removeFactor(userId, type) {
        if (type === 'totp') pendingTotp.delete(userId);
        return factors.delete(`${userId}:${type}`);
      },
      async acceptTotpStep(userId, step) {
        const f = factors.get(`${userId}:totp`);
        if (!f || step <= (f.lastStep ?? -1)) return false;
        f.lastStep = step;
        return true;
      },
      async savePendingTotp(p) {
        pendingTotp.set(p.userId, copy(p));
      },
      async getPendingTotp(userId, now) {
        const p = pendingTotp.get(userId);
        if (!p || hasEnded(p.expiresAt, now)) return null;
        return copy(p);
      },
      async confirmPendingTotp(userId, secret, step, now) {
        const p = pendingTotp.get(userId);
        if (!p || hasEnded(p.expiresAt, now) || p.secret.data !== secret.data) return false;
        pendingTotp.delete(userId);
        factors.set(`${userId}:totp`, {
          userId,
          type: 'totp',
          enabledAt: new Date(now),
          secret: copy(p.secret),
          lastStep: step,
        });
        return true;
      },
    },

    pendingLogins: {
      async create(p) {
        sweep(p.createdAt);
        pending.set(p.jti, copy(p));
      },
      async get(jti, now) {
        const p = livePending(jti, now);
        return p ? copy(p) : null;
      },
      async recordFailure(jti, max, now) {
        const p = livePending(jti, now);
        if (!p) return null;
        p.failures += 1;
        if (p.failures >= max) pending.delete(jti);
        return p.failures;
      },
      async consume(jti, now) {
        const p = livePending(jti, now);
        if (!p) return null;
        pending.delete(jti);
        return copy(p);
      },
      async claimSend(jti, now, { cooldownSeconds, maxSends }) {
        const p = livePending(jti, now);
        if (!p) return null;
        if (p.sends >= maxSends) {
          const left = Math.ceil((p.expiresAt.getTime() - now.getTime()) / 1000);
          return { ok: false, reason: 'exhausted', retryAfterSeconds: Math.max(1, left) };
        }
        if (p.lastSentAt) {
          const since = (now.getTime() - p.lastSentAt.getTime()) / 1000;
          if (since < cooldownSeconds)
            return { ok: false, reason: 'cooldown', retryAfterSeconds: Math.ceil(cooldownSeconds - since) };
        }
        p.sends += 1;
        p.lastSentAt = new Date(now);
        return { ok: true, sends: p.sends };
      },
      async voidForUser(userId) {
        return dropOf(pending, userId);
      },
    },

    emailCodes: {
      async put(code) {
        sweep(code.createdAt);
        codes.set(code.key, copy(code));
      },
      async consume(key, codeHash, now) {
        if (!liveCode(key, codeHash, now)) return false;
        codes.delete(key);
        return true;
      },
      async matches(key, codeHash, now) {
        return liveCode(key, codeHash, now);
      },
      async has(key, now) {
        const c = codes.get(key);
        return !!c && !hasEnded(c.expiresAt, now);
      },
      async delete(key) {
        codes.delete(key);
      },
    },

    recoveryCodes: {
      async replaceAll(userId, list) {
        recovery.set(userId, list.map(copy));
      },
      async addIfNone(userId, list) {
        if ((recovery.get(userId)?.length ?? 0) > 0) return false;
        recovery.set(userId, list.map(copy));
        return true;
      },
      async listUnused(userId) {
        return (recovery.get(userId) ?? []).map(copy);
      },
      async use(userId, id) {
        const list = recovery.get(userId) ?? [];
        const i = list.findIndex((c) => c.id === id);
        if (i === -1) return false;
        list.splice(i, 1);
        return true;
      },
      async deleteAll(userId) {
        recovery.delete(userId);
      },
    },

    webauthnCredentials: {
      async addCredential(c) {
        if (credentials.has(c.id)) return false;
        credentials.set(c.id, copy(c));
        return true;
      },
      async getCredential(id) {
        const c = credentials.get(id);
        return c ? copy(c) : null;
      },
      async listCredentials(userId) {
        return [...credentials.values()]
          .filter((c) => c.userId === userId)
          .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
          .map(copy);
      },
      async updateCounter(id, expected, next, usedAt) {
        const c = credentials.get(id);
        if (!c || c.counter !== expected) return false;
        c.counter = next;
        c.lastUsedAt = new Date(usedAt);
        return true;
      },
      async removeCredential(userId, id) {
        const c = credentials.get(id);
        if (!c || c.userId !== userId) return false;
        return credentials.delete(id);
      },
      async removeAllCredentials(userId) {
        return dropOf(credentials, userId);
      },
    },

    webauthnChallenges: {
      async putChallenge(ch) {
        challenges.set(`${ch.purpose}:${ch.subject}`, copy(ch));
      },
      async takeChallenge(purpose, subject, now) {
        const key = `${purpose}:${subject}`;
        const ch = challenges.get(key);
        if (!ch) return null;
        challenges.delete(key);
        return hasEnded(ch.expiresAt, now) ? null : ch;
      },
    },
  };
}
