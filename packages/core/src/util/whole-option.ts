import { ConfigError } from '../errors.js';

/** A whole-number option, `dflt` when absent: a `ConfigError` naming it unless it is a safe
 *  integer of at least `min` (a fraction, NaN or a negative count would misbehave silently). */
export function wholeOption(name: string, value: number | undefined, dflt: number, min = 1): number {
  const n = value ?? dflt;
  if (!Number.isSafeInteger(n) || n < min) throw new ConfigError(`${name} must be an integer >= ${min}`);
  return n;
}
