import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import * as common from '@zxcvbn-ts/language-common';
import * as en from '@zxcvbn-ts/language-en';
import { foldedText } from '../util/text.js';

let factory: ZxcvbnFactory | undefined;

/** Characters scored in all, over every spelling: what one check of an ASCII password reads.
 *  A check's time grows faster than its length, so scoring each of a password's spellings
 *  whole would cost a full check per spelling on the event loop; shared out, the spellings
 *  cost no more than one check (decision 0115). */
export const MAX_SCORED_CHARS = 64;

// Built on first use: loading the dictionaries takes ~0.3 s. Without them common passwords pass.
// Levenshtein matching stays off and maxLength / l33tMaxSubstitutions bound the CPU of one check
// (otherwise a 128-character random password takes seconds on the event loop).
function zxcvbn(): ZxcvbnFactory {
  factory ??= new ZxcvbnFactory({
    dictionary: { ...common.dictionary, ...en.dictionary },
    graphs: common.adjacencyGraphs,
    translations: en.translations,
    maxLength: MAX_SCORED_CHARS,
    l33tMaxSubstitutions: 10,
  });
  return factory;
}

/** Character i of each `from` mapped to character i of its `to`. */
const charMap = (pairs: Array<[string, string]>): Record<string, string> =>
  Object.fromEntries(pairs.flatMap(([from, to]) => [...from].map((c, i) => [c, [...to][i]!])));
/** Cyrillic and Greek letters that look like Latin ones, case kept (zxcvbn scores capitals):
 *  `pаsswоrd` with a Cyrillic а and о is `password` to anyone who reads it, and to a guesser. */
const LOOKALIKE = charMap([
  ['аеорсухіјѕԁӏһԛԝ', 'aeopcyxijsdlhqw'],
  ['АВЕКМНОРСТХУІЈЅ', 'ABEKMHOPCTXYIJS'],
  ['αεικνορτυχ', 'aeikvoptux'],
  ['ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ', 'ABEZHIKMNOPTYX'],
]);
/** The Russian keyboard (ЙЦУКЕН) as the QWERTY keys under it, shifted or not: `пароль` is typed
 *  as `gfhjkm`, and leaked password lists hold both. */
const QWERTY_OF_RUSSIAN = charMap([
  ['йцукенгшщзхъфывапролджэячсмитьбюё', "qwertyuiop[]asdfghjkl;'zxcvbnm,.`"],
  ['ЙЦУКЕНГШЩЗХЪФЫВАПРОЛДЖЭЯЧСМИТЬБЮЁ', 'QWERTYUIOP{}ASDFGHJKL:"ZXCVBNM<>~'],
]);
const map = (s: string, table: Record<string, string>) => [...s].map((c) => table[c] ?? c).join('');

/** The spellings of one password a guesser tries as one: as typed; NFKC (full-width and
 *  mathematical letters, ligatures) without invisible characters; look-alike letters as Latin;
 *  Russian keyboard input as its QWERTY keys. An ASCII password has only the first. Each is
 *  cut to its share of `MAX_SCORED_CHARS` (a prefix, as zxcvbn's own `maxLength` cuts): an
 *  ASCII password is scored on its first 64 characters, as always; one with three spellings
 *  on the first 21 of each, which is where a disguised common password shows anyway. */
export function scoredSpellings(password: string): string[] {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ASCII is the range tested
  if (/^[\u0000-\u007f]*$/.test(password)) return [password.slice(0, MAX_SCORED_CHARS)];
  const folded = foldedText(password);
  const out = new Set([password, folded, map(folded, LOOKALIKE)]);
  if (/[\u0400-\u04ff]/u.test(folded)) out.add(map(folded, QWERTY_OF_RUSSIAN));
  const list = [...out].filter((s) => s.length > 0);
  const share = Math.floor(MAX_SCORED_CHARS / list.length);
  // By code points, so a cut never splits a surrogate pair (an emoji).
  return [...new Set(list.map((s) => [...s].slice(0, share).join('')))];
}

/** zxcvbn-ts score (0-4) of `password`, with `context` (email, name, hosts) as known words: the
 *  lowest over its spellings (above), so `ｐａｓｓｗｏｒｄ１２３` scores as `password123`. All
 *  spellings together cost at most one check of 64 characters; a score of 0 ends the search. */
export function passwordScore(
  password: string,
  context: string[],
): { score: number; warning: string | null } {
  let worst: { score: number; warning: string | null } | null = null;
  for (const s of scoredSpellings(password)) {
    const r = zxcvbn().check(s, context);
    if (worst === null || r.score < worst.score) worst = { score: r.score, warning: r.feedback.warning };
    if (worst.score === 0) break;
  }
  return worst!;
}

/** Words a guesser would try for this user: the email, its parts, the name, host names. */
export function contextWords(values: Array<string | undefined>): string[] {
  const words = new Set<string>();
  for (const v of values) {
    if (!v) continue;
    const s = v.toLowerCase();
    words.add(s);
    for (const part of s.split(/[^\p{L}\p{N}]+/u)) if (part.length >= 3) words.add(part);
  }
  return [...words];
}
