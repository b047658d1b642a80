import type { Logger } from '../ports/logger.js';
import { errorMessage } from '../util/error-message.js';

/** Work a request must not wait for (mails, the reset-code issue, rehashing), so timing never
 *  tells whether an account exists. Failures are logged; `drain()` waits for what is running. */
export function createBackground(logger: Logger) {
  const running = new Set<Promise<void>>();
  return {
    run(task: string, fn: () => Promise<unknown>): void {
      const p: Promise<void> = Promise.resolve()
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
