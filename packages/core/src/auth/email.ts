/** The one canonical email form for uniqueness, lookup and limiter keys: trimmed, NFC,
 *  lower case (SECURITY.md Everywhere). */
export function canonicalEmail(email: string): string {
  return email.trim().normalize('NFC').toLowerCase();
}
