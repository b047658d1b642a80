import type { AuthStores } from '../ports/auth-stores.js';
import { memoryLimiterStore } from './limiter-store.js';
import type { MemoryStoresOptions } from './options.js';
import { memoryResetCodeStore } from './reset-code-store.js';
import { memorySessionStore } from './session-store.js';
import { memoryUserStore } from './user-store.js';

/** `onUserDeleted`: see `memoryUserStore`. */
export function memoryAuthStores(
  { clock, limiterMaxKeys, logger }: Required<MemoryStoresOptions>,
  onUserDeleted?: (userId: string) => void,
): AuthStores {
  return {
    users: memoryUserStore(onUserDeleted),
    sessions: memorySessionStore(clock),
    resetCodes: memoryResetCodeStore(clock),
    limiter: memoryLimiterStore(limiterMaxKeys, logger),
  };
}
