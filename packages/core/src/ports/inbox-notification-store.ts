/** Idempotency of owner/member notifications. Key: `${messageId}:${userId}`. */
export interface InboxNotificationStore {
  /** Claims the key for sending. `true` when it was never claimed, or when an earlier claim was
   *  neither completed nor released and its lease has run out (`leaseUntil` of that claim is
   *  before `now`). Atomic: of concurrent claimers at most one gets `true`. */
  claim(key: string, now: Date, leaseUntil: Date): Promise<boolean>;
  /** The notification went out: the key is never claimable again. */
  complete(key: string, now: Date): Promise<void>;
  /** Sending failed: the key is claimable again at once. A completed key stays completed. */
  release(key: string): Promise<void>;
}
