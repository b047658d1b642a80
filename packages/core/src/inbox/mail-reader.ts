/** An address header's entries as the reader gives them (`{ name, address }` or a `group` of
 *  them): read through `parseAddresses`, which bounds and checks them. */
export type MimeAddressEntry = unknown;

/** A raw MIME message as plain data, header words decoded. */
export interface MimeMail {
  from: MimeAddressEntry[];
  replyTo: MimeAddressEntry[];
  to: MimeAddressEntry[];
  cc: MimeAddressEntry[];
  subject: string | null;
  messageId: string | null;
  inReplyTo: string | null;
  references: string[];
  html: string | null;
  /** The `text/plain` body, not derived from the HTML. */
  text: string | null;
  attachments: Array<{
    filename: string | null;
    contentType: string;
    contentId: string | null;
    contentDisposition: string | null;
    related: boolean;
    content: Uint8Array;
  }>;
}

/** What the inbound consumer reads mail with: `@postern/inbox`, which carries the MIME parser,
 *  html-to-text and the header-word decoder, so hosts that never receive mail do not install
 *  them. */
export interface MailReader {
  /** Throws on input it cannot read. */
  parseMime(raw: Uint8Array): Promise<MimeMail>;
  /** Bounded work, never throws (see @postern/inbox). */
  htmlToText(html: string): Promise<string>;
  /** RFC 2047 encoded words decoded; may throw on an unknown charset. */
  decodeWords(value: string): string;
}

/** Gives the reader, loading it on first use. */
export type MailReaderLoader = () => Promise<MailReader>;
