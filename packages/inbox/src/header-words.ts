/// <reference path="./libmime.d.ts" />
import libmime from 'libmime';

/** A header value with its RFC 2047 encoded words (`=?UTF-8?B?...?=`) decoded, as mailparser
 *  decodes them in raw MIME. Throws on a charset libmime cannot read. */
export function decodeWords(value: string): string {
  return libmime.decodeWords(value);
}
