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

/** zxcvbn-ts score (0-4) of `password`, with `context` (email, name, hosts) as known words. */
export function passwordScore(
  password: string,
  context: string[],
): { score: number; warning: string | null } {
  const r = zxcvbn().check(password, context);
  return { score: r.score, warning: r.feedback.warning };
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
