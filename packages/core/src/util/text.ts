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

/** Characters no text shown to people needs (a regular-expression class): control characters
 *  (C0, DEL, C1: NEL is a line break to some readers), line and paragraph separators, and the
 *  bidi embeddings, overrides and isolates that reorder what follows them
 *  (`Invoice\u202Egpj.exe` shows as `Invoiceexe.jpg`). Names refuse them; header text loses them. */
export const UNSAFE_TEXT = '\\p{Cc}\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069';
const NOT_IN_NAMES = new RegExp(`[${UNSAFE_TEXT}]`, 'u');
/** Something visible: not only white space, invisible (default-ignorable) characters and the
 *  blank Braille pattern. */
const VISIBLE = /[^\s\p{Default_Ignorable_Code_Point}\u2800]/u;

/** A name people set for themselves or for what they own (user, inbox account, passkey):
 *  well-formed Unicode (a lone surrogate has no UTF-8 form, so stores would keep it
 *  differently), none of the characters above, and something visible. */
export function isDisplayName(name: string): boolean {
  return name.isWellFormed() && !NOT_IN_NAMES.test(name) && VISIBLE.test(name);
}

/** Message for a name `isDisplayName` refuses. */
export const DISPLAY_NAME_MESSAGE = 'Use visible text without control or direction-override characters';

/** Invisible characters (zero-width space, word joiner, BOM...): they change no word. */
const INVISIBLE = /\p{Default_Ignorable_Code_Point}/gu;

/** Text as people read it, for comparing, never for storing: NFKC (full-width and mathematical
 *  letters, ligatures) without invisible characters. */
export function foldedText(text: string): string {
  return text.normalize('NFKC').replace(INVISIBLE, '');
}
