/** What a consumer receives: one outbox event, possibly again (at-least-once). */
export interface DeliveredEvent {
  id: string;
  name: string;
  /** The raw webhook body as received (UTF-8 text). */
  payload: string;
  /** 1 on the first delivery. */
  attempt: number;
  /** Attempts the queue makes in all (the dispatcher's `maxAttempts`). Absent, a consumer takes
   *  the Postern outbox's own; a host feeding the consumers from its own queue passes its. */
  maxAttempts?: number;
  createdAt: Date;
  /** When this delivery's lease runs out (wall-clock ms, as `Date.now()`): from then on the
   *  event may be delivered again elsewhere, so long work should stop well before. Absent:
   *  no lease (a consumer called by hand). */
  leaseEndsAt?: number;
  /** Aborted when the dispatcher's `stop()` is called: a consumer's own waits give up then
   *  and leave the event to a retry, so `stop()` waits for work, not for pauses. Absent when a
   *  test or script calls the consumer by hand. */
  signal?: AbortSignal;
}

/** Thrown by a consumer that must not run again before `notBefore` (something another delivery
 *  holds until then): the retry waits for the later of its backoff and that time, so a long
 *  hold does not use up the attempts. */
export class RetryLater extends Error {
  constructor(
    message: string,
    readonly notBefore: Date,
  ) {
    super(message);
    this.name = 'RetryLater';
  }
}

/** A consumer finishes an event by returning (optionally with an outcome such as
 *  `no_account` or `provider_not_found`), or asks for a retry by throwing. Consumers must be
 *  idempotent: a retried event must not repeat an effect. */
// biome-ignore lint/suspicious/noConfusingVoidType: a plain `async (e) => {}` consumer returns Promise<void>
export type Consumer = (event: DeliveredEvent) => Promise<void | { outcome: string }>;

export const EVENT_RECEIVED = 'inbox.mail.webhook.event.received';
export const INBOUND_RECEIVED = 'inbox.mail.webhook.inbound.received';

/** What `outbox.publish()` takes. `payload` is opaque text (a webhook's raw body). */
export interface PublishInput {
  name: string;
  payload: string;
  /** Publishing the same key again inserts nothing and returns the first event's id. */
  dedupeKey?: string;
}

/** Outbox dispatcher options (`createPostern({ outbox })`). */
export interface OutboxOptions {
  /** Deliveries before an event is marked dead. Default 10. */
  maxAttempts?: number;
  /** Backoff base: retry n waits a random time in [0, min(maxDelayMs, baseDelayMs * 2^(n-1))]. Default 1 s. */
  baseDelayMs?: number;
  /** Backoff cap. Default 1 h. */
  maxDelayMs?: number;
  /** How often started workers look for due events when nothing wakes them. Default 1 s. */
  pollIntervalMs?: number;
  /** Events delivered at once per process (and claimed per `runOnce`). Default 4. */
  concurrency?: number;
  /** Lease of a claim: a worker that dies mid-delivery loses the event to another after this. Default 5 min. */
  visibilityTimeoutMs?: number;
  /** Finished (`done`) events are purged this long after they finish, with their dedupe keys. Default 7 days. */
  retentionMs?: number;
}
