import addressparser from 'nodemailer/lib/addressparser';
import { canonicalEmail } from '../util/email.js';
import { UNSAFE_TEXT } from '../util/text.js';

/** Longest address kept (RFC 5321 path limit). */
const MAX_ADDRESS = 254;
/** Longest display string kept for `from`/`to`/`cc` entries. */
const MAX_DISPLAY = 500;
/** Most addresses taken from one header. */
const MAX_ADDRESSES = 100;
/** Deepest nesting followed (a group inside a list is 3): a signed payload can nest arrays
 *  50,000 deep, and following them would overflow the stack on every retry of the event. */
const MAX_DEPTH = 8;

const CONTROL = new RegExp(`[${UNSAFE_TEXT}]+`, 'gu');

/** Removes CR, LF and other control characters: what remains cannot start a new mail header. */
export function headerSafe(value: string, max = 998): string {
  return value.replace(CONTROL, ' ').trim().slice(0, max).toWellFormed();
}

/** Stranger text for a header Postern sends (a subject, a display name): `headerSafe`, and no
 *  RFC 2047 encoded word. Sent as ASCII, `=?UTF-8?Q?Hi=0D=0ABcc:...?=` would be decoded by the
 *  reader's mail client, CR/LF and direction overrides included; a word joiner after its `=`
 *  keeps it literal text, and makes the mailer encode the whole header. */
export function outgoingHeaderText(value: string, max = 998): string {
  return headerSafe(value, max).replaceAll('=?', '=\u2060?');
}

/** The address without `+tag` sub-addressing: `ann+news@x` -> `ann@x`. */
export function stripTag(address: string): string {
  const at = address.lastIndexOf('@');
  if (at <= 0) return address;
  const plus = address.indexOf('+');
  return plus > 0 && plus < at ? address.slice(0, plus) + address.slice(at) : address;
}

const plausible = (a: string) => a.length <= MAX_ADDRESS && /^[^\s@]+@[^\s@]+$/.test(a);

export interface ParsedAddress {
  /** As written, CR/LF removed, e.g. `Ann <ann@example.com>`. */
  display: string;
  /** Canonical address; `null` when the entry has none. */
  address: string | null;
}

/** Parses address fields from payloads, API answers and headers: a string (`"A" <a@x>, b@y`),
 *  an array of strings, or objects `{ email | address, name }`. Never throws. */
export function parseAddresses(value: unknown): ParsedAddress[] {
  const out: ParsedAddress[] = [];
  const push = (display: string, address: string | null) => {
    if (out.length >= MAX_ADDRESSES) return;
    const a = address === null ? null : canonicalEmail(address);
    out.push({ display: headerSafe(display, MAX_DISPLAY), address: a !== null && plausible(a) ? a : null });
  };
  const visit = (v: unknown, depth: number) => {
    if (depth > MAX_DEPTH) return;
    if (typeof v === 'string') {
      if (v.length > 100_000) return;
      let parsed: Array<{ name: string; address: string }> = [];
      try {
        parsed = addressparser(v, { flatten: true });
      } catch {
        parsed = [];
      }
      for (const p of parsed) {
        const display = p.name && p.address ? `${p.name} <${p.address}>` : p.address || p.name;
        if (display) push(display, p.address || null);
      }
    } else if (Array.isArray(v)) {
      for (const x of v.slice(0, MAX_ADDRESSES)) visit(x, depth + 1);
    } else if (typeof v === 'object' && v !== null) {
      const o = v as Record<string, unknown>;
      const address = Object.hasOwn(o, 'email')
        ? o.email
        : Object.hasOwn(o, 'address')
          ? o.address
          : undefined;
      const name = Object.hasOwn(o, 'name') && typeof o.name === 'string' ? o.name : '';
      if (typeof address === 'string' && address) push(name ? `${name} <${address}>` : address, address);
      else if (Object.hasOwn(o, 'group')) visit(o.group, depth + 1);
      else if (Object.hasOwn(o, 'value')) visit(o.value, depth + 1);
    }
  };
  visit(value, 0);
  return out;
}
