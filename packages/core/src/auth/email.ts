/** The one canonical email form for uniqueness, lookup and limiter keys: trimmed, NFC,
 *  lower case (SECURITY.md Everywhere). */
export function canonicalEmail(email: string): string {
  return email.trim().normalize('NFC').toLowerCase();
}

const ATEXT = "[\\p{L}\\p{M}\\p{N}!#$%&'*+/=?^_`{|}~-]";
const LABEL = '[\\p{L}\\p{M}\\p{N}](?:[\\p{L}\\p{M}\\p{N}-]{0,61}[\\p{L}\\p{M}\\p{N}])?';

/** A mailbox address as people type it, internationalised (RFC 6531): a dot-atom local part
 *  of at most 64 characters (letters of any script, digits and RFC 5322's specials), then a
 *  domain name of two or more labels ending in letters or an `xn--` label. Quoted local parts
 *  and IP-literal domains are refused: no mailbox people sign up with needs them. */
export const EMAIL_PATTERN = new RegExp(
  `^(?=[^@]{1,64}@)${ATEXT}+(?:\\.${ATEXT}+)*@(?:${LABEL}\\.)+(?:[\\p{L}\\p{M}]{2,63}|xn--[a-z0-9-]{1,59})$`,
  'iu',
);
