import type { AuthStores } from './auth-stores.js';
import type { InboxStores } from './inbox-stores.js';
import type { MfaStores } from './mfa-stores.js';
import type { WebhookStores } from './webhook-stores.js';

/** Every storage port as one object (`memoryStores()`, `postgresStores({ pool })`). */
export interface Stores extends AuthStores, MfaStores, WebhookStores, InboxStores {
  /** Runs `fn` with stores bound to one transaction: everything commits or nothing does.
   *  Used where a state change and its follow-up must not split (reset: consume the code,
   *  set the password, end every session). Nested calls join the outer transaction. */
  transaction<T>(fn: (tx: Stores) => Promise<T>): Promise<T>;
  /** Releases resources (pools, timers). */
  close?(): Promise<void>;
}
