/** A JSON escape of a surrogate: only through one can decoded UTF-8 text hold a lone one
 *  (no UTF-8 form: `encodeURIComponent` throws on it, Buffer and Postgres turn it into U+FFFD). */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
const wellFormedStrings = (_key: string, v: unknown) => (typeof v === 'string' ? v.toWellFormed() : v);

/** `JSON.parse` whose strings are well-formed Unicode (lone surrogates become U+FFFD, what
 *  UTF-8 encoding would make of them anyway, so memory and Postgres stores hold the same text).
 *  Foreign JSON (webhook payloads, provider answers) feeds file names, headers and URLs; the
 *  reviver runs only when the text escapes a surrogate at all, so ordinary payloads parse at
 *  native speed. */
export function parseWellFormedJson(text: string): unknown {
  return SURROGATE_ESCAPE.test(text) ? JSON.parse(text, wellFormedStrings) : JSON.parse(text);
}
