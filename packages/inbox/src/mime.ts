import { type AddressObject, type EmailAddress, simpleParser } from 'mailparser';

/** One entry of an address header: a mailbox, or a named group of mailboxes. */
export interface MimeAddress {
  name: string;
  address?: string;
  group?: MimeAddress[];
}

/** One MIME part that is an attachment, with its bytes. */
export interface MimeAttachment {
  filename: string | null;
  /** As the part declares it, parameters included. */
  contentType: string;
  contentId: string | null;
  contentDisposition: string | null;
  /** Part of a `multipart/related` body (an image the HTML shows). */
  related: boolean;
  /** mailparser's own bytes, not a copy. */
  content: Uint8Array;
}

/** A MIME message as plain data. Header text is decoded (RFC 2047) but not checked: what
 *  reaches a store or another header is the caller's to bound and clean. */
export interface ParsedMime {
  from: MimeAddress[];
  replyTo: MimeAddress[];
  to: MimeAddress[];
  cc: MimeAddress[];
  subject: string | null;
  messageId: string | null;
  inReplyTo: string | null;
  references: string[];
  html: string | null;
  /** The `text/plain` body; null when the mail has none (its text is not derived from HTML). */
  text: string | null;
  attachments: MimeAttachment[];
}

const addresses = (v: AddressObject | AddressObject[] | undefined): MimeAddress[] =>
  (Array.isArray(v) ? v : v ? [v] : []).flatMap((o) => o.value.map(plainAddress));

function plainAddress(a: EmailAddress): MimeAddress {
  const out: MimeAddress = { name: a.name };
  if (a.address) out.address = a.address;
  if (a.group) out.group = a.group.map(plainAddress);
  return out;
}

/** Parses a raw MIME message with mailparser. HTML is neither derived from the text nor turned
 *  into text here: mailparser's own HTML-to-text has no bound on its work (see `htmlToText`).
 *  Throws on input mailparser cannot read. */
export async function parseMime(raw: Uint8Array): Promise<ParsedMime> {
  const mail = await simpleParser(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength), {
    skipHtmlToText: true,
    skipTextToHtml: true,
    skipImageLinks: true,
    skipTextLinks: true,
  });
  const references = mail.references ?? [];
  return {
    from: addresses(mail.from),
    replyTo: addresses(mail.replyTo),
    to: addresses(mail.to),
    cc: addresses(mail.cc),
    subject: mail.subject ?? null,
    messageId: mail.messageId ?? null,
    inReplyTo: mail.inReplyTo ?? null,
    references: Array.isArray(references) ? references : [references],
    html: typeof mail.html === 'string' ? mail.html : null,
    text: mail.text ?? null,
    attachments: mail.attachments.map((a) => ({
      filename: a.filename ?? null,
      contentType: a.contentType,
      contentId: a.contentId ?? null,
      contentDisposition: a.contentDisposition ?? null,
      related: a.related === true,
      content: a.content,
    })),
  };
}
