import type { LimiterStore } from './limiter-store.js';
import type { ResetCodeStore } from './reset-code-store.js';
import type { SessionStore } from './session-store.js';
import type { UserStore } from './user-store.js';

/** The auth area's storage ports (one port per file beside this one). */
export type AuthStores = {
  users: UserStore;
  sessions: SessionStore;
  resetCodes: ResetCodeStore;
  limiter: LimiterStore;
};
