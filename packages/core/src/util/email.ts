import { domainToASCII, domainToUnicode } from 'node:url';

/** The one canonical email form for uniqueness, lookup and limiter keys, used
 *  everywhere: trimmed, NFC, lower case, and the domain in its one IDNA form, so `bücher.de`,
 *  `xn--bcher-kva.de` and a full-width spelling are one domain. A domain IDNA refuses is kept
 *  as typed (the address pattern refuses it, or it matches nothing). */
export function canonicalEmail(email: string): string {
  // NFC again after lower-casing: `J` + U+030C lower-cases to `j` + U+030C, which NFC composes
  // to `ǰ`; without it the form would not be idempotent and two spellings would make two accounts.
  const lower = email.trim().normalize('NFC').toLowerCase().normalize('NFC');
  const at = lower.lastIndexOf('@');
  if (at < 0) return lower;
  const ascii = domainToASCII(lower.slice(at + 1));
  return ascii ? `${lower.slice(0, at + 1)}${domainToUnicode(ascii).normalize('NFC')}` : lower;
}

const START = "\\p{L}\\p{N}!#$%&'*+/=?^_`{|}~-";
const ATOM = `[${START}][\\p{M}${START}]*`;
const LABEL = '[\\p{L}\\p{N}](?:[\\p{L}\\p{M}\\p{N}-]{0,61}[\\p{L}\\p{M}\\p{N}])?';

/** A mailbox address as people type it, internationalised (RFC 6531): a dot-atom local part
 *  of at most 64 characters (letters of any script, digits and RFC 5322's specials; a mark
 *  never first), then a domain name of two or more labels ending in letters or an `xn--`
 *  label. Invisible (default-ignorable) characters, quoted local parts and IP-literal domains
 *  are refused: no mailbox people sign up with needs them, and each is a way to make two
 *  addresses look alike. */
export const EMAIL_PATTERN = new RegExp(
  `^(?!.*\\p{Default_Ignorable_Code_Point})(?=[^@]{1,64}@)${ATOM}(?:\\.${ATOM})*@(?:${LABEL}\\.)+(?:\\p{L}[\\p{L}\\p{M}]{1,62}|xn--[a-z0-9-]{1,59})$`,
  'u',
);

/** Most bytes of a local part (RFC 5321 4.5.3.1.1, in UTF-8 under RFC 6531). */
const MAX_LOCAL_BYTES = 64;
/** Most characters of a domain and of one label in their ASCII (punycode) form (RFC 1035). */
const MAX_DOMAIN_ASCII = 253;
const MAX_LABEL_ASCII = 63;

/** Letters NFKC rewrites that are letters of their own, typed on their languages' keyboards:
 *  Thai and Lao sara am (`น้ำ`), Lao ho no and ho mo, Armenian ech yiwn (`Երևան`). */
const KEYBOARD_LETTERS = new Set(['\u0e33', '\u0eb3', '\u0edc', '\u0edd', '\u0587']);

/** True when a character of `text` is one NFKC rewrites (full-width and mathematical letters,
 *  ligatures, the long s, super- and subscripts, presentation forms), apart from the letters
 *  above. Checked per character: an NFC string changes under NFKC only through them. */
function hasCompatibilityForm(text: string): boolean {
  for (const c of text) if (c.normalize('NFKC') !== c && !KEYBOARD_LETTERS.has(c)) return true;
  return false;
}

/** A canonical address people can be reached at and told apart by: it matches `EMAIL_PATTERN`,
 *  and also
 *  - its local part is at most 64 bytes of UTF-8 and its domain fits DNS once in punycode
 *    (counted in characters, `ü` x 64 passed: an account for an address no mail reaches);
 *  - its local part holds no compatibility form (below): full-width letters, ligatures, the
 *    long s and mathematical letters (`ﬁnance@`, `ſupport@`, `ａdmin@`) would be accounts that
 *    look like `finance@`, `support@`, `admin@`;
 *  - its local part holds no RFC 2047 encoded word (`=?`) and no `%`: a mail system that decodes
 *    the one or honours `%` routing delivers such an address elsewhere, and a verification
 *    code sent there would verify a domain the signer does not own ("splitting the email atom"). */
export function isMailboxAddress(canonical: string): boolean {
  return EMAIL_PATTERN.test(canonical) && withinMailboxLimits(canonical);
}

/** The checks of `isMailboxAddress` beyond `EMAIL_PATTERN`, for an address that matched it
 *  (the email field tests the pattern first: no second run of it per signup and login). */
export function withinMailboxLimits(canonical: string): boolean {
  const at = canonical.lastIndexOf('@');
  const local = canonical.slice(0, at);
  if (Buffer.byteLength(local) > MAX_LOCAL_BYTES) return false;
  if (hasCompatibilityForm(local) || local.includes('=?') || local.includes('%')) return false;
  const domain = domainToASCII(canonical.slice(at + 1));
  return (
    domain !== '' &&
    domain.length <= MAX_DOMAIN_ASCII &&
    domain.split('.').every((label) => label.length <= MAX_LABEL_ASCII)
  );
}
