/** Reply/forward prefixes in common languages: Re, Fwd, Fw, AW and WG (de), SV (sv/da/no),
 *  VS (fi), Antw (nl), Ref, Rif (it), Tr, Ré, Réf (fr), Enc, Res (pt), RV (es), Odp (pl),
 *  YNT (tr), Vá (hu), Atb (lv).
 *  Optional counter (`Re[2]`, `Re(2)`, `Re^2`), then `:` or the full-width `：`. */
const PREFIX =
  /^\s*(?:re|fwd?|aw|wg|sv|vs|antw|antwort|ref|rif|tr|enc|rv|odp|ynt|res|ré|réf|vá|atb)\s*(?:\[\d{1,4}\]|\(\d{1,4}\)|\^\d{1,4})?\s*[:：]\s*/iu;

/** Leading `[list]` tags: kept, but prefixes right after them are stripped too. */
const TAGS = /^(?:\[[^\]]{0,200}\]\s*)*/u;

/** Longest subject kept. */
export const MAX_SUBJECT = 998;

/** The matching form of a subject: NFKC, leading reply/forward prefixes removed (any number,
 *  with or without white space), `[list]` tags kept, white space collapsed, lower case. */
export function normalizeSubject(subject: string): string {
  let s = subject.normalize('NFKC').replace(/\s+/gu, ' ').trim();
  for (let i = 0; i < 50; i++) {
    const tags = TAGS.exec(s)?.[0] ?? '';
    const rest = s.slice(tags.length);
    const next = rest.replace(PREFIX, '');
    if (next === rest) break;
    s = tags + next;
  }
  return s.trim().toLowerCase();
}
