import { ConfigError } from '../errors.js';

/** The longest delay a Node timer keeps (about 24.8 days): a longer one fires after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** An integer option, `dflt` when absent: a `ConfigError` naming it unless it is a safe
 *  integer from `min` to `max` (a fraction, NaN or a negative count would misbehave silently;
 *  pass `MAX_TIMER_MS` for a delay that goes into a timer). */
export function integerOption(
  name: string,
  value: number | undefined,
  dflt: number,
  min = 1,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const n = value ?? dflt;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new ConfigError(
      max === Number.MAX_SAFE_INTEGER
        ? `${name} must be an integer >= ${min}`
        : `${name} must be an integer from ${min} to ${max}`,
    );
  }
  return n;
}
