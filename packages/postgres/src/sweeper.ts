import type { Logger } from '@postern/core';

/** A store's sweep of rows nobody asks for again, kept off the request that triggers it: every
 *  `every`th `tick` starts one in the background unless one is still running (one at a time),
 *  and a failure is logged, never the request's. Stores bound to a transaction never sweep: the
 *  statement would run on the transaction's client, maybe after it was handed back; the pool's
 *  stores sweep for them. */
export function backgroundSweep(opts: {
  every: number;
  inTransaction: boolean;
  logger: Logger;
  /** Logged on a failure, e.g. `limiter_sweep_failed`. */
  event: string;
  run: (now: Date) => Promise<unknown>;
}): (now: Date) => void {
  let ticks = 0;
  let running = false;
  return (now) => {
    if (opts.inTransaction || ++ticks % opts.every !== 0 || running) return;
    running = true;
    opts
      .run(now)
      .catch((err: unknown) => opts.logger.warn({ event: opts.event, err: String(err) }, 'sweep failed'))
      .finally(() => {
        running = false;
      });
  };
}
