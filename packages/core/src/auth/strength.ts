import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import * as common from '@zxcvbn-ts/language-common';
import * as en from '@zxcvbn-ts/language-en';

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

/** Invisible characters (zero-width space, word joiner, BOM...): a guesser leaves them out. */
const INVISIBLE = /\p{Default_Ignorable_Code_Point}/gu;
/** Cyrillic and Greek letters that look like Latin ones (lower case): `pаsswоrd` with a
 *  Cyrillic а and о is `password` to anyone who reads it, and to a guesser's list. */
const LOOKALIKE: Record<string, string> = {
  а: 'a',
  в: 'b',
  е: 'e',
  ё: 'e',
  к: 'k',
  м: 'm',
  н: 'h',
  о: 'o',
  р: 'p',
  с: 'c',
  т: 't',
  у: 'y',
  х: 'x',
  і: 'i',
  ј: 'j',
  ѕ: 's',
  ԁ: 'd',
  ӏ: 'l',
  һ: 'h',
  ԛ: 'q',
  ԝ: 'w',
  α: 'a',
  ε: 'e',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
};
/** The Russian keyboard (ЙЦУКЕН) as the QWERTY keys under it: `пароль` is typed as `gfhjkm`,
 *  and leaked password lists hold both. */
const QWERTY_OF_RUSSIAN: Record<string, string> = Object.fromEntries(
  [...'йцукенгшщзхъфывапролджэячсмитьбюё'].map((c, i) => [c, "qwertyuiop[]asdfghjkl;'zxcvbnm,.`"[i]!]),
);
const map = (s: string, table: Record<string, string>) => [...s].map((c) => table[c] ?? c).join('');

/** The spellings of one password a guesser tries as one: as typed; NFKC (full-width and
 *  mathematical letters, ligatures) without invisible characters; look-alike letters as Latin;
 *  Russian keyboard input as its QWERTY keys. Only those that differ from the typed one. */
function spellings(password: string): string[] {
  const folded = password.normalize('NFKC').replace(INVISIBLE, '');
  const lower = folded.toLowerCase();
  const out = new Set([password, folded, map(lower, LOOKALIKE)]);
  if (/[\u0400-\u04ff]/u.test(lower)) out.add(map(lower, QWERTY_OF_RUSSIAN));
  return [...out].filter((s, i) => i === 0 || (s !== password && s.length > 0));
}

/** zxcvbn-ts score (0-4) of `password`, with `context` (email, name, hosts) as known words: the
 *  lowest over its spellings (above), so `ｐａｓｓｗｏｒｄ１２３` scores as `password123`. An
 *  ASCII password has one spelling, and costs one check. */
export function passwordScore(
  password: string,
  context: string[],
): { score: number; warning: string | null } {
  let worst: { score: number; warning: string | null } | null = null;
  for (const s of spellings(password)) {
    const r = zxcvbn().check(s, context);
    if (worst === null || r.score < worst.score) worst = { score: r.score, warning: r.feedback.warning };
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
