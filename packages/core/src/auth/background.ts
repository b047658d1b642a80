import type { Logger } from '../ports/logger.js';
import { errorMessage } from '../util/error-message.js';

/** Work a request must not wait for (mails, the reset-code issue, rehashing), so timing never
 *  tells whether an account exists. Failures are logged; `drain()` waits for what is running. */
export function createBackground(logger: Logger) {
  const running = new Set<Promise<void>>();
  return {
    run(task: string, fn: () => Promise<unknown>): void {
      // Started on the next turn of the event loop, after the answer is written: with
      // in-process stores the work would otherwise run among the answer's own microtasks.
      const p: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
        .then(fn)
        .then(
          () => {},
          (e: unknown) => {
            logger.error(
              { event: 'background_failed', task, err: errorMessage(e) },
              'background task failed',
            );
          },
        )
        .finally(() => running.delete(p));
      running.add(p);
    },
    async drain(): Promise<void> {
      while (running.size > 0) await Promise.all(running);
    },
  };
}

export type Background = ReturnType<typeof createBackground>;
