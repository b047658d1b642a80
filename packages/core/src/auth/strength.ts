import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import * as common from '@zxcvbn-ts/language-common';
import * as en from '@zxcvbn-ts/language-en';
import { foldedText } from '../util/text.js';

let factory: ZxcvbnFactory | undefined;

// Built on first use: loading the dictionaries takes ~0.3 s. Without them common passwords pass.
// Levenshtein matching stays off and maxLength / l33tMaxSubstitutions bound the CPU of one check
// (otherwise a 128-character random password takes seconds on the event loop).
function zxcvbn(): ZxcvbnFactory {
  factory ??= new ZxcvbnFactory({
    dictionary: { ...common.dictionary, ...en.dictionary },
    graphs: common.adjacencyGraphs,
    translations: en.translations,
    maxLength: 64,
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
 *  Russian keyboard input as its QWERTY keys. An ASCII password has only the first. */
function spellings(password: string): string[] {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ASCII is the range tested
  if (/^[\u0000-\u007f]*$/.test(password)) return [password];
  const folded = foldedText(password);
  const out = new Set([password, folded, map(folded, LOOKALIKE)]);
  if (/[\u0400-\u04ff]/u.test(folded)) out.add(map(folded, QWERTY_OF_RUSSIAN));
  return [...out].filter((s) => s.length > 0);
}

/** zxcvbn-ts score (0-4) of `password`, with `context` (email, name, hosts) as known words: the
 *  lowest over its spellings (above), so `ｐａｓｓｗｏｒｄ１２３` scores as `password123`. An
 *  ASCII password costs one check, as before; a score of 0 ends the search. */
export function passwordScore(
  password: string,
  context: string[],
): { score: number; warning: string | null } {
  let worst: { score: number; warning: string | null } | null = null;
  for (const s of spellings(password)) {
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
