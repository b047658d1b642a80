export type NotificationClaim = 'claimed' | 'completed' | 'held';

/** Idempotency of owner/member notifications. Key: `${messageId}:${userId}`. */
export interface InboxNotificationStore {
  /** Claims the key for sending: `claimed` when it was never claimed, or when an earlier claim
   *  was neither completed nor released and its lease has run out (`leaseUntil` of that claim is
   *  before `now`); `completed` once sent; `held` while another claim's lease runs (the caller
   *  must come back: that sender may still fail). Atomic: of concurrent claimers at most one gets
   *  `claimed`. */
  claim(key: string, now: Date, leaseUntil: Date): Promise<NotificationClaim>;
  /** The notification went out: the key is never claimable again. */
  complete(key: string, now: Date): Promise<void>;
  /** Sending failed: the key is claimable again at once. A completed key stays completed. */
  release(key: string): Promise<void>;
}
