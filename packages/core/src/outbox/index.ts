import { randomUUID } from 'node:crypto';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import type { PosternBase } from '../context.js';
import { ConfigError, isStoreError, PosternError } from '../errors.js';
import type {
  OutboxEvent,
  OutboxLease,
  OutboxStats,
  OutboxStatus,
  PublishResult,
} from '../ports/outbox-store.js';
import { integerOption, MAX_TIMER_MS } from '../util/integer-option.js';
import { backoffDelay } from './backoff.js';
import { type Consumer, type OutboxOptions, type PublishInput, RetryLater } from './types.js';

export * from './types.js';

const SECOND = 1000;
const HOUR = 3600 * SECOND;
const DEFAULTS: Required<OutboxOptions> = {
  maxAttempts: 10,
  baseDelayMs: SECOND,
  maxDelayMs: HOUR,
  pollIntervalMs: SECOND,
  concurrency: 4,
  visibilityTimeoutMs: 5 * 60 * SECOND,
  retentionMs: 7 * 24 * HOUR,
};
const PURGE_EVERY_MS = HOUR;
/** Records one purge call deletes at most: a short statement (Postgres) or a short turn of the
 *  event loop (memory), however large the backlog. */
export const PURGE_BATCH = 1000;

/** Calls `purgeBatch(PURGE_BATCH)` until it deletes less than a full batch, letting the event
 *  loop run between batches; returns how many were deleted in all. */
export async function purgeInBatches(purgeBatch: (limit: number) => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await purgeBatch(PURGE_BATCH);
    total += n;
    if (n < PURGE_BATCH) return total;
    await nextTurn();
  }
}
const MAX_ERROR_CHARS = 1000;

/** The outbox dispatcher (`ph.outbox`): at-least-once delivery of published events to the
 *  consumer subscribed to their name, retries with backoff, then `dead`. */
export interface Outbox {
  /** Stores a pending event; returns its id (the first event's id for a repeated `dedupeKey`). */
  publish(input: PublishInput): Promise<string>;
  /** Like `publish`, and tells whether this call inserted the event. */
  publishIfNew(input: PublishInput): Promise<PublishResult>;
  /** One consumer per event name, subscribed at start-up. Events of names nobody consumes stay pending. */
  subscribe(name: string, consumer: Consumer): void;
  /** Claims up to `concurrency` due events, delivers them, waits; returns how many were delivered. */
  runOnce(): Promise<number>;
  /** `runOnce` until nothing is due (for tests and scripts); returns how many deliveries ran.
   *  It never waits for a retry: a failed event is due again only once the clock passes its
   *  backoff, so tests move their clock and drain again. */
  drain(): Promise<number>;
  /** Starts background workers: poll every `pollIntervalMs`, woken early by publishes. */
  start(): void;
  /** Stops the workers; resolves once in-flight deliveries have finished. */
  stop(): Promise<void>;
  get(id: string): Promise<OutboxEvent | null>;
  listDead(opts?: { limit?: number; offset?: number }): Promise<OutboxEvent[]>;
  /** A dead event gets a fresh set of attempts; false when it is unknown or not dead. */
  replay(id: string): Promise<boolean>;
  /** Events per status (monitoring; tests check that nothing was published). */
  stats(): Promise<OutboxStats>;
  /** Deletes `done` events older than `retentionMs`, and whatever else the areas retain for
   *  a while (mail events), in batches; returns how many records went. Started workers do this
   *  hourly. */
  purge(): Promise<number>;
}

/** The outbox options with their defaults, checked (`ConfigError`). */
export function resolveOutboxOptions(input: OutboxOptions = {}): Required<OutboxOptions> {
  const o = { ...DEFAULTS };
  for (const key of Object.keys(DEFAULTS) as Array<keyof OutboxOptions>) {
    const min = key === 'baseDelayMs' || key === 'maxDelayMs' ? 0 : 1;
    const max = key === 'pollIntervalMs' ? MAX_TIMER_MS : undefined;
    o[key] = integerOption(`outbox.${key}`, input[key], DEFAULTS[key], min, max);
  }
  return o;
}

function describeError(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return text.slice(0, MAX_ERROR_CHARS);
}

function outcomeOf(result: unknown): string | null {
  if (typeof result !== 'object' || result === null || !Object.hasOwn(result, 'outcome')) return null;
  const outcome = (result as { outcome: unknown }).outcome;
  return typeof outcome === 'string' ? outcome.slice(0, 200) : null;
}

/** `retention`: more purges run with the outbox's own (each answers how many records it
 *  deleted), so the workers that purge done events purge every retained record. */
export function createOutbox(
  ctx: Pick<PosternBase, 'options' | 'stores' | 'clock' | 'logger'>,
  extra: { retention?: ReadonlyArray<() => Promise<number>> } = {},
): Outbox {
  const o = resolveOutboxOptions(ctx.options.outbox);
  const { clock, logger } = ctx;
  // Read at use: a custom `Stores` without an outbox only fails when the outbox is used.
  const store = () => ctx.stores.outbox;
  const workerId = randomUUID();
  const consumers = new Map<string, Consumer>();
  const inFlight = new Set<Promise<void>>();
  let running = false;
  /** Aborted when `stop()` is called: a write waiting for the store and a consumer's own
   *  waits (`DeliveredEvent.signal`) give up at once. A fresh one per `start()`. */
  let halt = new AbortController();
  let pumping: Promise<void> | null = null;
  let pumpAgain = false;
  let timer: NodeJS.Timeout | undefined;
  let unsubscribeWake: (() => void) | undefined;
  let lastPurge = 0;

  /** Writes what became of a delivery (`status`: what the write sets). While the store is away
   *  (a database restart) a started dispatcher tries the write again, 0.25 s doubling to 5 s,
   *  until the lease would have run out or `stop()` is called: giving up at once left the event
   *  leased for the whole visibility timeout although this worker lives and the database was
   *  back within seconds. A late write is fenced off by the lease. */
  async function settle(
    e: OutboxEvent,
    lease: OutboxLease,
    status: OutboxStatus,
    write: () => Promise<boolean>,
    until: number,
  ): Promise<boolean> {
    for (let delay = 250, tried = false; ; delay = Math.min(delay * 2, 5000), tried = true) {
      try {
        // A retried write refused by the fence may have committed the first time (its answer
        // was lost): the event then still carries this claim's attempt, with the status set.
        return (await write()) || (tried && (await landed(e, lease, status)));
      } catch (err) {
        if (!isStoreError(err) || !running || Date.now() + delay >= until) throw err;
        await sleep(delay, undefined, { signal: halt.signal, ref: false }).catch(() => {});
        if (!running) throw err;
      }
    }
  }

  async function landed(e: OutboxEvent, lease: OutboxLease, status: OutboxStatus): Promise<boolean> {
    const now = await store().get(e.id);
    return now?.attempts === lease.attempt && now.status === status && now.lockedBy === null;
  }

  const leaseLost = (e: OutboxEvent) =>
    logger.warn({ event: 'outbox_lease_lost', outboxEventId: e.id, name: e.name }, 'outbox lease lost');

  async function fail(e: OutboxEvent, lease: OutboxLease, err: unknown, until: number): Promise<void> {
    const error = describeError(err);
    const fields = { outboxEventId: e.id, name: e.name, attempt: e.attempts, err: error };
    if (e.attempts >= o.maxAttempts) {
      if (await settle(e, lease, 'dead', () => store().kill(e.id, lease, error, clock.now()), until))
        logger.error({ event: 'outbox_dead', ...fields }, 'outbox event dead after its last attempt');
      else leaseLost(e);
      return;
    }
    const now = clock.now().getTime();
    const due = Math.max(
      now + backoffDelay(e.attempts, o.baseDelayMs, o.maxDelayMs),
      err instanceof RetryLater ? err.notBefore.getTime() : 0,
    );
    const retried = () => store().retry(e.id, lease, error, new Date(due));
    if (await settle(e, lease, 'pending', retried, until))
      logger.warn(
        { event: 'outbox_retry', ...fields, delayMs: due - now },
        'outbox consumer failed; retry scheduled',
      );
    else leaseLost(e);
  }

  async function deliver(e: OutboxEvent): Promise<void> {
    const lease: OutboxLease = { workerId, attempt: e.attempts };
    const until = Date.now() + o.visibilityTimeoutMs;
    try {
      const consumer = consumers.get(e.name);
      // A claim past the last attempt means a worker died holding the lease (or a consumer
      // takes down its process): stop here instead of looping on it.
      if (!consumer || e.attempts > o.maxAttempts) {
        await fail(
          e,
          lease,
          new Error(consumer ? 'lease expired on the last attempt' : 'no consumer'),
          until,
        );
        return;
      }
      let result: unknown;
      try {
        result = await consumer({
          id: e.id,
          name: e.name,
          payload: e.payload,
          attempt: e.attempts,
          maxAttempts: o.maxAttempts,
          createdAt: e.createdAt,
          leaseEndsAt: until,
          signal: halt.signal,
        });
      } catch (err) {
        await fail(e, lease, err, until);
        return;
      }
      const completed = () => store().complete(e.id, lease, outcomeOf(result), clock.now());
      if (!(await settle(e, lease, 'done', completed, until))) {
        leaseLost(e);
      }
    } catch (err) {
      // The store stayed away (or the dispatcher stopped): the lease runs out and the event is
      // delivered again.
      logger.warn(
        { event: 'outbox_store_error', outboxEventId: e.id, err: describeError(err) },
        'outbox store failed during delivery',
      );
    }
  }

  function track(e: OutboxEvent): Promise<void> {
    const p = deliver(e).finally(() => {
      inFlight.delete(p);
      if (running) void pump();
    });
    inFlight.add(p);
    return p;
  }

  function claim(limit: number): Promise<OutboxEvent[]> {
    return store().claim({
      names: [...consumers.keys()],
      limit,
      now: clock.now(),
      leaseMs: o.visibilityTimeoutMs,
      workerId,
    });
  }

  async function runOnce(): Promise<number> {
    if (consumers.size === 0) return 0;
    const events = await claim(o.concurrency);
    await Promise.all(events.map(track));
    return events.length;
  }

  async function purge(): Promise<number> {
    const before = new Date(clock.now().getTime() - o.retentionMs);
    let total = await purgeInBatches((limit) => store().purge(before, limit));
    for (const more of extra.retention ?? []) total += await more();
    return total;
  }

  /** Fills free delivery slots until nothing is due; overlapping calls coalesce into one. */
  function pump(): Promise<void> {
    if (pumping) {
      pumpAgain = true;
      return pumping;
    }
    pumping = (async () => {
      // Yield first: a turn with nothing to await (all slots busy, no purge due) would
      // otherwise run its `finally` before `pumping` is assigned and leave it set for good,
      // stalling every later pump.
      await Promise.resolve();
      try {
        const now = clock.now().getTime();
        if (now - lastPurge >= PURGE_EVERY_MS) {
          lastPurge = now;
          // A purge that fails (the store away) is tried again in an hour; claims go on.
          await purge().catch((err: unknown) =>
            logger.warn({ event: 'outbox_purge_failed', err: describeError(err) }, 'outbox purge failed'),
          );
        }
        // A wake-up while claiming sets `pumpAgain`; checked right before giving up the turn.
        do {
          pumpAgain = false;
          while (running && consumers.size > 0 && inFlight.size < o.concurrency) {
            const events = await claim(o.concurrency - inFlight.size);
            for (const e of events) void track(e);
            if (events.length === 0) break;
          }
        } while (pumpAgain && running);
      } catch (err) {
        logger.warn({ event: 'outbox_store_error', err: describeError(err) }, 'outbox claim failed');
      } finally {
        pumping = null;
        if (running) {
          clearTimeout(timer);
          timer = setTimeout(() => void pump(), o.pollIntervalMs);
        }
      }
    })();
    return pumping;
  }

  /** A started dispatcher delivers what was just published without waiting for its poll. */
  const wakeOnNew = (r: PublishResult): PublishResult => {
    if (r.created && running) void pump();
    return r;
  };

  // No `async` wrapper: webhook intake awaits this on every request.
  function publishIfNew(input: PublishInput): Promise<PublishResult> {
    // A few typeof checks, so every store refuses a malformed event alike (not as a SQL error).
    if (
      typeof input?.name !== 'string' ||
      input.name === '' ||
      typeof input.payload !== 'string' ||
      (input.dedupeKey !== undefined && typeof input.dedupeKey !== 'string')
    )
      return Promise.reject(
        new PosternError('validation_failed', {
          detail: 'An outbox event needs a name, a string payload and an optional string dedupeKey',
        }),
      );
    return store().publish(input, clock.now()).then(wakeOnNew);
  }

  return {
    publish: async (input) => (await publishIfNew(input)).id,

    publishIfNew,

    subscribe(name, consumer) {
      if (consumers.has(name)) throw new ConfigError(`outbox: a consumer for ${name} is already subscribed`);
      consumers.set(name, consumer);
    },

    runOnce,

    async drain() {
      let total = 0;
      for (let n = await runOnce(); n > 0; n = await runOnce()) total += n;
      return total;
    },

    start() {
      if (running) return;
      running = true;
      halt = new AbortController();
      unsubscribeWake = store().subscribeWake?.(() => void pump());
      void pump();
    },

    async stop() {
      running = false;
      halt.abort();
      clearTimeout(timer);
      unsubscribeWake?.();
      unsubscribeWake = undefined;
      // No pump starts once `running` is false: waiting for the current one is enough.
      await pumping;
      await Promise.allSettled([...inFlight]);
    },

    get: (id) => store().get(id),

    listDead: ({ limit = 100, offset = 0 } = {}) => store().listDead({ limit, offset }),

    async replay(id) {
      const ok = await store().replay(id, clock.now());
      if (ok && running) void pump();
      return ok;
    },

    stats: () => store().stats(),

    purge,
  };
}
