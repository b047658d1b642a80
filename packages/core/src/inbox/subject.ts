import { foldedText } from '../util/text.js';

/** Reply/forward prefixes in common languages: Re, Fwd, Fw, AW and WG (de), SV (sv/da/no),
 *  VS and VL (fi), VB (sv), Antw and Doorst (nl), R, I, Ref, Rif (it), Tr, Ré, Rép, Réf (fr),
 *  Enc, Res (pt), RV (es), Odp and PD (pl), YNT, Yanıt and İLT (tr), Vá (hu), Atb (lv), Ответ,
 *  Отв and Пересл (ru), ΑΠ, ΣΧΕΤ and ΠΡΘ (el), 回复, 回覆, 答复, 答覆, 转发 and 轉寄 (zh), 회신,
 *  답장 and 전달 (ko), תשובה and העבר (he), رد (ar). Optional counter (`Re[2]`, `Re(2)`,
 *  `Re^2`), then `:` or the full-width `：`. */
const PREFIX =
  /^\s*(?:re|fwd?|aw|wg|sv|vs|vl|vb|antw|antwort|doorst|r|i|ref|rif|tr|enc|rv|odp|pd|ynt|yan[ıi]t|[iİ]lt|res|ré|rép|réf|vá|atb|ответ|отв|пересл|απ|σχετ|πρθ|回复|回覆|答复|答覆|转发|轉發|转寄|轉寄|회신|답장|전달|תשובה|העבר|رد)\s*(?:\[\d{1,4}\]|\(\d{1,4}\)|\^\d{1,4})?\s*[:：]\s*/iu;

/** Leading `[list]` tags: kept, but prefixes right after them are stripped too. */
const TAGS = /^(?:\[[^\]]{0,200}\]\s*)*/u;

/** Longest subject kept. */
export const MAX_SUBJECT = 998;

/** The matching form of a subject: NFKC without invisible characters, leading reply/forward
 *  prefixes removed (any number, with or without white space), `[list]` tags kept, white space
 *  collapsed, lower case and NFKC again (lower-casing can undo it: `J` + U+030C lower-cases to
 *  `j` + U+030C, which composes to `ǰ`). */
export function normalizeSubject(subject: string): string {
  let s = foldedText(subject).replace(/\s+/gu, ' ').trim();
  for (let i = 0; i < 50; i++) {
    const tags = TAGS.exec(s)?.[0] ?? '';
    const rest = s.slice(tags.length);
    const next = rest.replace(PREFIX, '');
    if (next === rest) break;
    s = tags + next;
  }
  return s.trim().toLowerCase().normalize('NFKC');
}
