// The inbox area's option types: a leaf that the shared options import.

/** The provider API as configuration (Resend-compatible). */
export interface ProviderConfig {
  /** Base URL, e.g. `https://api.resend.com` (`PROVIDER_API_URL`). */
  apiUrl: string;
  /** API token (`PROVIDER_API_TOKEN`). Absent: no provider fetch, replies go through the mailer. */
  token?: string;
  /** Per request, headers and body together. Default 10 s. */
  timeoutMs?: number;
  /** Largest JSON answer read. Default 10 MiB. */
  maxResponseBytes?: number;
  /** Largest attachment downloaded. Default 25 MiB. */
  maxAttachmentBytes?: number;
}

export interface InboxOptions {
  /** How far back threading by subject (strategies 2 and 3) looks, in days. Default 90. */
  threadingWindowDays?: number;
  /** Largest attachment stored, in bytes; bigger ones are skipped and logged. Default 25 MiB. */
  maxAttachmentBytes?: number;
  /** Threads per page of `GET /inbox/accounts/{id}/threads`. Default 50 (at most 200). */
  pageSize?: number;
  /** Who may create an inbox account for an address. Default: any signed-in user, and the
   *  first to claim an address owns it. Return `false` to answer 403 `forbidden`. */
  canCreateAccount?: (input: { userId: string; address: string }) => boolean | Promise<boolean>;
  /** How long a notification claim lasts before a retry may send again, ms. Default 5 min. */
  notificationLeaseMs?: number;
  /** How long one delivery of an inbound mail spends downloading its attachments before it
   *  leaves the rest to a retry, ms. Default 2 min: under the outbox's 5-minute lease, so a
   *  provider that hangs on every download cannot hold a worker for the whole message. */
  attachmentBudgetMs?: number;
  /** How long a delivery event whose message is not known is kept waiting for it, ms (from
   *  when it was recorded). Default 7 days; then the workers delete it. */
  unmatchedEventRetentionMs?: number;
  /** How long an applied delivery event is kept for the record, ms (its effect stays on the
   *  message). Default 90 days; then the workers delete it. */
  mailEventRetentionMs?: number;
}
