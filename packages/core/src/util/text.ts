/** A lone surrogate: a JSON escape such as `\ud800` decodes to one, and it has no UTF-8 form
 *  (`encodeURIComponent` throws on it, Buffer and Postgres turn it into U+FFFD). */
export const LONE_SURROGATE = /\p{Cs}/u;

/** The text with each lone surrogate replaced by U+FFFD (what UTF-8 encoding would make of
 *  it anyway, so memory and Postgres stores hold the same string). */
export const wellFormed = (s: string): string => s.replace(/\p{Cs}/gu, '\uFFFD');

/** A JSON escape of a surrogate: only through one can decoded UTF-8 text hold a lone one. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
const wellFormedStrings = (_key: string, v: unknown) => (typeof v === 'string' ? wellFormed(v) : v);

/** `JSON.parse` whose strings are well-formed Unicode. Foreign JSON (webhook payloads, provider
 *  answers) feeds file names, headers and URLs; the reviver runs only when the text escapes a
 *  surrogate at all, so ordinary payloads parse at native speed. */
export function parseWellFormedJson(text: string): unknown {
  return SURROGATE_ESCAPE.test(text) ? JSON.parse(text, wellFormedStrings) : JSON.parse(text);
}
