import type { MailReader } from './mail-reader.js';

/** Mail headers from untrusted JSON (an object of name -> value(s), or an array of
 *  `{ name, value }`), as a Map of lower-case names: no object keys come from strangers. */
export function headerMap(v: unknown): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const add = (name: unknown, value: unknown) => {
    if (typeof name !== 'string' || name.length > 200 || out.size >= 500) return;
    const values = (Array.isArray(value) ? value : [value]).filter((x): x is string => typeof x === 'string');
    if (values.length === 0) return;
    const key = name.toLowerCase();
    out.set(key, [...(out.get(key) ?? []), ...values.slice(0, 100).map((x) => x.slice(0, 20_000))]);
  };
  if (Array.isArray(v)) {
    for (const h of v.slice(0, 500)) {
      if (typeof h === 'object' && h !== null)
        add((h as { name?: unknown }).name, (h as { value?: unknown }).value);
    }
  } else if (typeof v === 'object' && v !== null) {
    for (const [name, value] of Object.entries(v)) add(name, value);
  }
  return out;
}

/** First value of a header, or `undefined`. */
export function firstHeader(headers: Map<string, string[]>, name: string): string | undefined {
  return headers.get(name)?.[0];
}

/** The first value of an unstructured header (a subject) as people read it: RFC 2047 encoded
 *  words decoded, as mailparser does for raw MIME, so a headers-only payload threads with the
 *  same mail given decoded. Address headers are not decoded here: an encoded word in a display
 *  name must never turn into an address. */
export function decodedHeader(
  headers: Map<string, string[]>,
  name: string,
  reader: Pick<MailReader, 'decodeWords'>,
): string | undefined {
  const value = firstHeader(headers, name);
  if (value === undefined || !value.includes('=?')) return value;
  try {
    return reader.decodeWords(value);
  } catch {
    return value;
  }
}

/** A content type safe to store and send back: `type/subtype`, lower case, no parameters. */
export function safeContentType(value: unknown): string {
  if (typeof value !== 'string') return 'application/octet-stream';
  const t = value.split(';')[0]!.trim().toLowerCase();
  return /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/.test(t)
    ? t
    : 'application/octet-stream';
}
