/** `pending`: waiting or being delivered; `done`: a consumer finished it; `dead`: out of attempts. */
export type OutboxStatus = 'pending' | 'done' | 'dead';

/** One outbox event (the integration subsystem's unit of work). */
export interface OutboxEvent {
  id: string;
  /** Event name, e.g. `inbox.mail.webhook.event.received`; consumers subscribe by it. */
  name: string;
  /** Opaque text (a webhook's raw body as received). */
  payload: string;
  /** Unique among all stored events when set (webhook receipts: `webhook-id`, replay hash). */
  dedupeKey: string | null;
  status: OutboxStatus;
  /** Deliveries started so far: incremented by every claim, reset by `replay`. */
  attempts: number;
  /** A pending event is due from this instant on. */
  availableAt: Date;
  /** Lease of the current claim: the worker that holds it and until when. */
  lockedBy: string | null;
  lockedUntil: Date | null;
  /** Last failure (retry or dead), kept after a replay for the record. */
  lastError: string | null;
  /** What the consumer reported when it finished the event (`no_account`, ...); null for plain success. */
  outcome: string | null;
  createdAt: Date;
  /** When it became `done` or `dead`. */
  finishedAt: Date | null;
}

export interface NewOutboxEvent {
  name: string;
  payload: string;
  dedupeKey?: string;
}

export interface PublishResult {
  id: string;
  /** False when an event with the same `dedupeKey` already existed (nothing was inserted). */
  created: boolean;
}

/** Identifies one claim of an event: writes from an older claim are fenced off. */
export interface OutboxLease {
  workerId: string;
  /** `attempts` of the event as returned by `claim`. */
  attempt: number;
}

export interface ClaimOptions {
  /** Only events with these names (names that have a consumer); others stay pending. */
  names: readonly string[];
  limit: number;
  now: Date;
  /** Visibility timeout: the claim holds the event for this long. */
  leaseMs: number;
  workerId: string;
}

export type OutboxStats = Record<OutboxStatus, number>;

/**
 * Durable outbox (at-least-once). Events are published inside or outside a transaction
 * (`tx.outbox.publish` commits with the state change that caused it) and claimed by workers.
 * Postgres: `FOR UPDATE SKIP LOCKED` claims with a lease column, `LISTEN/NOTIFY` wake-ups.
 */
export interface OutboxStore {
  /**
   * Inserts a pending event due at `now` (attempts 0). With `dedupeKey`: atomic insert-or-get,
   * one statement on the hot path; when an event with that key exists (any status) nothing is
   * inserted and its id comes back with `created: false`. Concurrent publishes of one key:
   * exactly one gets `created: true`, all get the same id.
   */
  publish(event: NewOutboxEvent, now: Date): Promise<PublishResult>;

  /**
   * Atomically claims up to `limit` pending events named in `names` that are due
   * (`availableAt <= now`) and not leased (`lockedUntil` null or `<= now`), oldest due first.
   * Each claimed event gets `lockedBy = workerId`, `lockedUntil = now + leaseMs`,
   * `attempts + 1`, and is returned in that new state. Concurrent claimers never receive the
   * same event while its lease holds; an expired lease (crashed worker) makes it claimable again.
   */
  claim(opts: ClaimOptions): Promise<OutboxEvent[]>;

  /** Marks the event `done` with `outcome`, clearing the lease. Only while `lease` is the
   *  current claim (same `lockedBy` and `attempts`, status pending); else false, no change. */
  complete(id: string, lease: OutboxLease, outcome: string | null, now: Date): Promise<boolean>;

  /** Back to pending, due at `availableAt`, lease cleared, `lastError` set. Same fencing as `complete`. */
  retry(id: string, lease: OutboxLease, error: string, availableAt: Date): Promise<boolean>;

  /** Marks the event `dead` with `lastError`, lease cleared. Same fencing as `complete`. */
  kill(id: string, lease: OutboxLease, error: string, now: Date): Promise<boolean>;

  /** Not found -> null. */
  get(id: string): Promise<OutboxEvent | null>;

  /** Dead events, most recently finished first. */
  listDead(opts: { limit: number; offset?: number }): Promise<OutboxEvent[]>;

  /** A dead event becomes pending again: attempts 0, due at `now`, `lastError` kept.
   *  False (no change) when the event is unknown or not dead. Atomic. */
  replay(id: string, now: Date): Promise<boolean>;

  /** Number of events per status. */
  stats(): Promise<OutboxStats>;

  /** Deletes `done` events finished before `before` (their dedupe keys with them), at most
   *  `limit` of them (the oldest first; all without a limit); returns how many. Pending and
   *  dead events are never purged. A caller purging a large backlog calls it again while it
   *  answers `limit`, so no one call holds the store (or its locks) for long. */
  purge(before: Date, limit?: number): Promise<number>;

  /** Optional wake-up: `listener` runs soon after an event becomes due elsewhere (publish,
   *  replay), also in other processes (Postgres `LISTEN/NOTIFY`). Returns an unsubscribe
   *  function. Workers poll anyway, so a store may omit it. */
  subscribeWake?(listener: () => void): () => void;
}
