import { randomInt } from 'node:crypto';
import type { Logger } from '@postern/core';
import type { PoolClientLike, PoolLike } from './db.js';

export const OUTBOX_CHANNEL = 'postern_outbox';
/** At most one wake-up NOTIFY per process in this window. */
export const PING_EVERY_MS = 50;
/** First key of every presence lock (`pg_advisory_lock(PRESENCE_CLASS, key)`): "gate". */
export const PRESENCE_CLASS = 0x67617465;

/**
 * Wakes sleeping workers of this schema in every process: `NOTIFY postern_outbox` with the
 * schema name as payload. Not a trigger on the outbox table: a NOTIFY takes a database-wide lock
 * at commit, which would serialise every intake commit behind it. Here the first publish after
 * a quiet spell notifies at once and later ones are folded into one NOTIFY per window, sent in
 * its own statement. Workers poll anyway, so a lost ping only costs latency.
 */
export function createPinger(pool: PoolLike, schema: string, logger: Logger) {
  let last = 0;
  let timer: NodeJS.Timeout | null = null;
  const send = () => {
    timer = null;
    last = Date.now();
    pool.query('SELECT pg_notify($1, $2)', [OUTBOX_CHANNEL, schema]).catch((err: unknown) => {
      logger.warn({ event: 'outbox_notify_failed', err: String(err) }, 'outbox NOTIFY failed');
    });
  };
  return {
    ping(): void {
      if (timer) return;
      const wait = last + PING_EVERY_MS - Date.now();
      if (wait <= 0) send();
      else {
        timer = setTimeout(send, wait);
        timer.unref();
      }
    },
    close(): void {
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}

export type Pinger = ReturnType<typeof createPinger>;

/** SQL that is true when no live process holds the presence lock of `ownerExpr` (an integer
 *  column); `$classParam` must be bound to PRESENCE_CLASS. */
export function presenceGone(ownerExpr: string, classParam: string): string {
  return `NOT EXISTS (
    SELECT 1 FROM pg_locks l
    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
      AND l.classid = ${classParam}::integer::oid AND l.objid = ${ownerExpr}::oid
  )`;
}

type ListenClient = PoolClientLike & {
  on(event: string, listener: (...args: any[]) => void): unknown;
  removeAllListeners?(event?: string): unknown;
};

/**
 * One connection per stores instance, open only while outbox workers run in this process
 * (intake-only processes never hold it). It does two things:
 * - `LISTEN postern_outbox`: publishers ping with the schema name as payload (see
 *   createPinger), so sleeping workers claim at once (apps sharing a database do not wake
 *   each other);
 * - presence: it holds a session advisory lock on a random key. Claims made meanwhile carry
 *   that key, and when this process dies its connection closes, the lock goes, and any
 *   process can release the dead worker's leases at once instead of waiting out the
 *   visibility timeout (see the outbox store's reaper).
 * A lost connection is reopened with backoff; subscribers are woken after a reconnect because
 * notifications sent while it was down are lost. Workers poll anyway: this only cuts latency.
 */
export function createWakeHub(pool: PoolLike, schema: string, logger: Logger) {
  const listeners = new Set<() => void>();
  /** Leases claimed under presence and not finished yet: presence outlives the workers' stop
   *  until they are settled, so a graceful shutdown does not hand in-flight events to others. */
  const leases = new Set<string>();
  const presence = randomInt(1, 2 ** 31 - 1);
  let client: ListenClient | null = null;
  let connecting = false;
  let retryTimer: NodeJS.Timeout | null = null;
  let failures = 0;
  let closed = false;

  const fire = () => {
    for (const l of listeners) {
      try {
        l();
      } catch (err) {
        logger.error({ event: 'outbox_wake_listener_failed', err: String(err) }, 'wake listener threw');
      }
    }
  };

  const idle = () => listeners.size === 0 && leases.size === 0;

  const drop = (err?: Error) => {
    const c = client;
    client = null;
    if (!c) return;
    c.removeAllListeners?.('notification');
    // Destroyed, not returned to the pool: LISTEN and the presence lock die with it.
    c.release(err ?? true);
  };

  const scheduleRetry = () => {
    if (closed || listeners.size === 0 || retryTimer) return;
    const delay = Math.min(30_000, 500 * 2 ** Math.min(failures, 6));
    failures += 1;
    retryTimer = setTimeout(() => {
      retryTimer = null;
      void open();
    }, delay);
    retryTimer.unref();
  };

  const open = async () => {
    if (closed || client || connecting || listeners.size === 0) return;
    connecting = true;
    let c: ListenClient | null = null;
    try {
      c = (await pool.connect()) as ListenClient;
      c.on('error', (err: Error) => {
        if (client !== c) return;
        logger.warn({ event: 'outbox_listen_lost', err: err.message }, 'outbox LISTEN connection lost');
        drop(err);
        scheduleRetry();
      });
      c.on('notification', (msg: { channel: string; payload?: string }) => {
        if (msg.channel === OUTBOX_CHANNEL && msg.payload === schema) fire();
      });
      await c.query(`LISTEN ${OUTBOX_CHANNEL}`);
      await c.query('SELECT pg_advisory_lock($1, $2)', [PRESENCE_CLASS, presence]);
      client = c;
      if (failures > 0) fire();
      failures = 0;
      if (closed || idle()) drop();
    } catch (err) {
      logger.warn({ event: 'outbox_listen_failed', err: String(err) }, 'outbox LISTEN failed; polling only');
      c?.release(err instanceof Error ? err : true);
      scheduleRetry();
    } finally {
      connecting = false;
    }
  };

  return {
    subscribe(listener: () => void): () => void {
      listeners.add(listener);
      void open();
      return () => {
        listeners.delete(listener);
        if (idle()) drop();
      };
    },
    /** The key claims may carry: set only while this process holds the presence lock. */
    presenceKey(): number | null {
      return client ? presence : null;
    },
    /** A lease was claimed under presence. */
    held(lease: string): void {
      leases.add(lease);
    },
    /** That lease was finished (completed, retried, killed) or lost. */
    settled(lease: string): void {
      if (leases.delete(lease) && idle()) drop();
    },
    close(): void {
      closed = true;
      listeners.clear();
      leases.clear();
      if (retryTimer) clearTimeout(retryTimer);
      drop();
    },
  };
}

export type WakeHub = ReturnType<typeof createWakeHub>;
