import { PosternError } from '../errors.js';

/** Runs at most `concurrency` tasks at once; the rest wait in FIFO order. Beyond `maxQueue`
 *  waiting tasks a new one is refused (503 `unavailable`), so a login flood queues a bounded
 *  amount of work and cannot starve the process of CPU or memory. */
export function createHashQueue(concurrency: number, maxQueue: number) {
  let running = 0;
  const waiting: Array<() => void> = [];

  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else running--;
  };

  return async function run<T>(task: () => Promise<T>): Promise<T> {
    if (running >= concurrency) {
      if (waiting.length >= maxQueue) throw new PosternError('unavailable', { retryAfter: 1 });
      // `release` hands its slot straight to the next waiter, so `running` stays counted.
      await new Promise<void>((resolve) => waiting.push(resolve));
    } else {
      running++;
    }
    try {
      return await task();
    } finally {
      release();
    }
  };
}
