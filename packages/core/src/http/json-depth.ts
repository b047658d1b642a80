const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** True when the JSON text in `bytes` opens more than `limit` objects or arrays inside one
 *  another. One pass over the bytes, no allocation: brackets inside strings (escapes honoured)
 *  do not count. Meant to run before `JSON.parse`, whose time on deep nesting is out of
 *  proportion to the bytes (2 million levels in 4 MiB: 1.5 s). Malformed JSON is left to the
 *  parser: this only answers how deep the brackets go. */
export function nestsDeeperThan(bytes: Uint8Array, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) inString = true;
    else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) depth--;
  }
  return false;
}
