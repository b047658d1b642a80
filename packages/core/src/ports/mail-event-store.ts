import type { DeliveryStatus } from './inbox-message-store.js';

/** `status`: changes the delivery status; `opened`/`clicked`: engagement; `other`: kept only. */
export type MailEventKind = 'status' | 'opened' | 'clicked' | 'other';

/** A `mail_event`: one delivery/engagement webhook, stored whether or not its message is known. */
export interface MailEvent {
  /** The outbox event id: one stored event per delivered outbox event. */
  id: string;
  /** Event type as received, e.g. `email.delivered`. */
  type: string;
  kind: MailEventKind;
  /** Mapped status for `kind: 'status'`, else `null`. */
  status: DeliveryStatus | null;
  /** The message it names (`data.email_id`); `null` when the payload names none usable: such an
   *  event is kept for audit only, stored as applied. */
  providerMessageId: string | null;
  /** When the provider says it happened (payload `created_at`), else when it was recorded. */
  occurredAt: Date;
  recordedAt: Date;
  /** Short reason from the provider (bounce message, failure reason), capped. */
  detail: string | null;
  /** When it was applied to its message(s); `null` while pending (message unknown so far). */
  appliedAt: Date | null;
}

export interface MailEventStore {
  /** Inserts unless `id` exists; returns the stored event and whether this call created it. */
  record(event: MailEvent): Promise<{ event: MailEvent; created: boolean }>;
  findById(id: string): Promise<MailEvent | null>;
  /** Events of this provider id still pending, oldest `occurredAt` first. */
  listPending(providerMessageId: string): Promise<MailEvent[]>;
  /** Moves the event from pending to applied. Atomic: of concurrent callers exactly one gets
   *  `true`; an applied or unknown event gives `false`. Meant to run in the same transaction
   *  as the message update, so the effect happens once. */
  markApplied(id: string, at: Date): Promise<boolean>;
  /** Deletes events past their retention: still pending (their message never came) and
   *  recorded before `unmatchedBefore`, or applied and recorded before `appliedBefore`; at most
   *  `limit` of them (all without a limit). Returns how many. A caller purging a large backlog
   *  calls it again while it answers `limit`, so no one call holds the store for long. */
  purge(cut: { unmatchedBefore: Date; appliedBefore: Date }, limit?: number): Promise<number>;
}
