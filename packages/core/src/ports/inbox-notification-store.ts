/** `heldBy`: the holder named by the live claim (null for a claim that named none). */
export type NotificationClaim = 'claimed' | 'completed' | { heldBy: string | null };

/** Idempotency of owner/member notifications. Key: `${messageId}:${userId}`. */
export interface InboxNotificationStore {
  /** Claims the key for sending on behalf of `holder` (the outbox event id): `claimed` when it
   *  was never claimed, or when an earlier claim was neither completed nor released and its
   *  lease has run out (`leaseUntil` of that claim is before `now`); `completed` once sent;
   *  `{ heldBy }` while another claim's lease runs. Atomic: of concurrent claimers at most one
   *  gets `claimed`. */
  claim(key: string, now: Date, leaseUntil: Date, holder: string): Promise<NotificationClaim>;
  /** The notification went out: the key is never claimable again. */
  complete(key: string, now: Date): Promise<void>;
  /** Sending failed: the key is claimable again at once. A completed key stays completed. */
  release(key: string): Promise<void>;
}
