import { isStoreError } from '@postern/core';
import { causeMessage, errorMessage } from './error-text.js';
import { jsonLogger } from './logger.js';

/** What a process of an example runs: the app or the worker. */
export interface Running {
  close(): Promise<void>;
}

const errorLog = jsonLogger('error', (line) => process.stderr.write(line));

/** One JSON line on stderr, with what went wrong in fields (a config message may quote a
 *  value) and no stack: a bad variable is an operator's mistake, not a bug to debug. */
function reportStartupFailure(err: unknown): void {
  const error = err instanceof Error ? err.name : typeof err;
  const reason = errorMessage(err);
  const cause = causeMessage(err);
  errorLog.error(
    {
      event: 'startup_failed',
      error,
      reason,
      ...(cause === undefined ? {} : { cause }),
      // The pool reports only "unavailable"; say which setting to look at (never its value).
      ...(isStoreError(err) ? { check: 'DATABASE_URL' } : {}),
    },
    'start-up failed',
  );
}

/** Starts a process of an example and stops it gracefully on SIGINT or SIGTERM: in-flight
 *  requests and deliveries finish, then exit 0. A repeated signal while stopping is ignored,
 *  since a terminal's Ctrl-C reaches pnpm and this process alike and pnpm passes its own on
 *  (SIGKILL still ends a stop that hangs). A start-up failure exits 1 after one log line. */
export async function runMain(start: () => Promise<Running>): Promise<void> {
  let running: Running;
  try {
    running = await start();
  } catch (err) {
    reportStartupFailure(err);
    process.exit(1);
  }
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    running.close().then(
      () => process.exit(0),
      (err: unknown) => {
        errorLog.error({ event: 'shutdown_failed', reason: errorMessage(err) }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
