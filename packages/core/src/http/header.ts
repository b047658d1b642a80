import type { HeaderValue } from './types.js';

/** The first value of a header an adapter may hand over as a list (Node joins most repeats,
 *  but not all). */
export function firstValue(value: HeaderValue): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
