import type { Clock } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';
import type { SessionStore } from '../ports/session-store.js';
import { errorMessage } from '../util/error-message.js';

const POLL_MS = 500;
/** A remote feed older than this is re-read before a Bearer check is trusted (fail closed). */
const STALE_MS = 3000;

/** The in-memory set of ended session ids that makes a Bearer check cost no store round trip.
 *  Fed by the store's ended feed: read on every check when the store is in-process, polled
 *  every 500 ms otherwise (so every instance learns of an end within a second). Entries are
 *  kept one access-token lifetime (plus clock tolerance): after that the tokens are expired anyway. */
export function createEndedSessions(opts: {
  store: SessionStore;
  clock: Clock;
  logger: Logger;
  retainSeconds: number;
}) {
  const ended = new Map<string, number>(); // sid -> forget after (clock ms)
  const retainMs = opts.retainSeconds * 1000;
  let cursor: string | null = null;
  let lastSync = Number.NEGATIVE_INFINITY; // performance.now() of the last good read
  let syncing: Promise<void> | null = null;
  let timer: ReturnType<typeof setInterval> | undefined;
  let failing = false;
  let checks = 0;

  const add = (sids: Iterable<string>) => {
    const until = opts.clock.now().getTime() + retainMs;
    for (const sid of sids) ended.set(sid, until);
  };

  const prune = () => {
    const t = opts.clock.now().getTime();
    for (const [sid, until] of ended) if (until <= t) ended.delete(sid);
  };

  const sync = (): Promise<void> => {
    syncing ??= (async () => {
      try {
        const page = await opts.store.endedSince(cursor, new Date(opts.clock.now().getTime() - retainMs));
        add(page.sids);
        cursor = page.cursor;
        lastSync = performance.now();
        failing = false;
      } finally {
        syncing = null;
      }
    })();
    return syncing;
  };

  const poll = () => {
    prune();
    sync().catch((e: unknown) => {
      if (!failing)
        opts.logger.warn(
          { event: 'session_feed_unavailable', err: errorMessage(e) },
          'cannot read ended sessions; Bearer checks will fail closed until it recovers',
        );
      failing = true;
    });
  };

  return {
    /** Sessions this instance ended itself: refused at once, without waiting for the feed. */
    add,
    /** True when `sid` has ended. Throws (503) when a remote feed cannot be read and is stale. */
    async has(sid: string): Promise<boolean> {
      if (opts.store.inProcess) {
        await sync();
        if (++checks % 1024 === 0) prune();
      } else {
        timer ??= setInterval(poll, POLL_MS);
        timer.unref?.();
        if (performance.now() - lastSync > STALE_MS) await sync();
      }
      return ended.has(sid);
    },
    stop(): void {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}

export type EndedSessions = ReturnType<typeof createEndedSessions>;
