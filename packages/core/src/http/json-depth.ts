import { PosternError } from '../errors.js';

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Deepest nesting of objects and arrays a JSON body may have. Request bodies and provider
 *  payloads nest a few levels; the bound is checked before parsing, which deep nesting makes
 *  slow. */
export const MAX_JSON_DEPTH = 100;

/** The 400 of a body nested deeper than `MAX_JSON_DEPTH`. `validation_failed`, not
 *  `invalid_json`: the text may be valid JSON, refused for its shape. */
export const nestedTooDeep = () =>
  new PosternError('validation_failed', {
    errors: [{ path: '/', message: `Objects and arrays nested deeper than ${MAX_JSON_DEPTH} levels` }],
    // Why it is refused, for the log line only.
    reason: 'nested_too_deep',
  });

/** Index of the quote that closes the string whose contents start at `from`, or -1. Found by
 *  `indexOf` (native, no per-byte loop here); a quote after an odd run of backslashes is
 *  escaped. Each backslash run is walked back over once, so the work stays linear. */
function closingQuote(bytes: Uint8Array, from: number): number {
  for (let q = bytes.indexOf(QUOTE, from); q !== -1; q = bytes.indexOf(QUOTE, q + 1)) {
    let j = q - 1;
    while (j >= from && bytes[j] === BACKSLASH) j--;
    if ((q - 1 - j) % 2 === 0) return q;
  }
  return -1;
}

/** True when the JSON text in `bytes` opens more than `limit` objects or arrays inside one
 *  another. One pass, no allocation: string contents are skipped whole, so brackets inside
 *  strings do not count. Meant to run before `JSON.parse`, whose time on deep nesting is out of
 *  proportion to the bytes (2 million levels in 4 MiB: 1.5 s). Malformed JSON is left to the
 *  parser: this only answers how deep the brackets go. */
export function nestsDeeperThan(bytes: Uint8Array, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (b === QUOTE) {
      i = closingQuote(bytes, i + 1);
      if (i === -1) return false;
    } else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) depth--;
  }
  return false;
}
