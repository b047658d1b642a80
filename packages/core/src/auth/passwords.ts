import { randomBytes } from 'node:crypto';
import { type Algorithm, hash, parseOptions, verify } from '@node-rs/argon2';
import type { PasswordService } from '../context.js';
import { PosternError } from '../errors.js';
import { createHashQueue } from './hash-queue.js';
import type { AuthConfig } from './options.js';
import { passwordScore } from './strength.js';

const ARGON2ID = 2 as Algorithm;
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 128;

/** Length in characters (code points), as the policy counts them. */
export const passwordLength = (password: string): number => [...password].length;

export interface AuthPasswordService extends PasswordService {
  /** True when `passwordHash` was made with other parameters than the configured ones. */
  needsRehash(passwordHash: string): boolean;
  /** Throws 400 when the host's breached-password check knows `password`. */
  assertNotBreached(password: string, field?: string): Promise<void>;
}

const weak = (path: string, message: string) =>
  new PosternError('validation_failed', { errors: [{ path, message }] });

/** Argon2id hashing through a bounded queue, a dummy hash for unknown users (same cost),
 *  and the strength policy. The password is hashed exactly as sent: no trim, no folding. */
export function createPasswordService(config: AuthConfig): AuthPasswordService {
  const { memoryCost, timeCost, parallelism, concurrency, maxQueue } = config.hashing;
  const params = { algorithm: ARGON2ID, memoryCost, timeCost, parallelism };
  const queue = createHashQueue(concurrency, maxQueue);
  let dummy: Promise<string> | undefined;
  const dummyHash = () => {
    dummy ??= hash(randomBytes(32), params);
    return dummy;
  };

  return {
    hash: (password) => queue(() => hash(password, params)),

    async verify(user, password) {
      const stored = user?.passwordHash ?? (await dummyHash());
      const ok = await queue(() => verify(stored, password).catch(() => false));
      return user !== null && ok;
    },

    assertStrong(password, context, field = 'password') {
      const length = passwordLength(password);
      if (length < PASSWORD_MIN) throw weak(field, `Use at least ${PASSWORD_MIN} characters`);
      if (length > PASSWORD_MAX) throw weak(field, `Use at most ${PASSWORD_MAX} characters`);
      const { score, warning } = passwordScore(password, context);
      if (score < config.minScore)
        throw weak(field, warning || 'Too easy to guess; add more words or characters');
    },

    async assertNotBreached(password, field = 'password') {
      if (config.isBreached && (await config.isBreached(password)))
        throw weak(field, 'This password appeared in a data breach; choose another');
    },

    needsRehash(passwordHash) {
      try {
        const p = parseOptions(passwordHash);
        return (
          p.algorithm !== ARGON2ID ||
          p.memoryCost !== memoryCost ||
          p.timeCost !== timeCost ||
          p.parallelism !== parallelism
        );
      } catch {
        return true;
      }
    },
  };
}
