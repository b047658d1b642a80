import type { MailProvider } from '../ports/mail-provider.js';
import { headerSafe, type ParsedAddress, parseAddresses } from './addresses.js';
import { decodedHeader, firstHeader, headerMap, safeContentType } from './headers.js';
import type { MailReader, MimeMail } from './mail-reader.js';
import { bareId, parseIdList } from './message-ids.js';
import { isProviderId, ProviderError } from './provider-client.js';
import { MAX_SUBJECT } from './subject.js';

/** Where an attachment's bytes come from; `load` runs only when it is not stored yet. */
export interface AttachmentSource {
  /** Stable for the same mail: `p:<provider id>`, `m:<part index>`, `i:<payload index>`. */
  sourceKey: string;
  filename: string;
  contentType: string;
  contentId: string | null;
  inline: boolean;
  /** `signal` ends a download early (the outbox is stopping): it then throws. */
  load(signal?: AbortSignal): Promise<Uint8Array | null>;
}

/** What the webhook payload itself says (Resend's `{ type, data: {...} }`, or a flat object). */
export interface Envelope {
  /** Provider id (`data.email_id`), when it looks like one. */
  emailId: string | null;
  from: ParsedAddress | null;
  replyTo: string | null;
  to: ParsedAddress[];
  cc: ParsedAddress[];
  /** `received_for` and `bcc`: tried after `to` and `cc`. */
  otherRecipients: ParsedAddress[];
  subject: string | null;
  messageId: string | null;
  headers: Map<string, string[]>;
  html: string | null;
  text: string | null;
  raw: string | null;
  attachments: unknown[];
}

/** The mail as stored: envelope merged with the body source. */
export interface InboundMail {
  emailId: string | null;
  from: ParsedAddress | null;
  replyTo: string | null;
  to: ParsedAddress[];
  cc: ParsedAddress[];
  otherRecipients: ParsedAddress[];
  subject: string;
  messageId: string | null;
  inReplyTo: string[];
  references: string[];
  html: string | null;
  text: string;
  attachments: AttachmentSource[];
  /** Which source gave the body. */
  source: 'provider' | 'payload' | 'raw' | 'none';
}

const MAX_BODY = 20 * 1024 * 1024;

const has = (o: Record<string, unknown>, k: string) => Object.hasOwn(o, k);
/** Own properties only: keys of strangers' JSON never reach the prototype chain. */
const get = (o: Record<string, unknown>, k: string): unknown => (has(o, k) ? o[k] : undefined);
const str = (o: Record<string, unknown>, k: string, max = MAX_BODY): string | null =>
  has(o, k) && typeof o[k] === 'string' ? (o[k] as string).slice(0, max) : null;
const asObject = (v: unknown): Record<string, unknown> | null =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;

/** Reads the fields of an inbound webhook body; never throws on odd shapes. */
export function readEnvelope(body: Record<string, unknown>, reader: MailReader): Envelope {
  const data = asObject(get(body, 'data')) ?? body;
  const headers = headerMap(get(data, 'headers'));
  const attachments = get(data, 'attachments');
  const emailId = str(data, 'email_id', 300) ?? str(data, 'id', 300);
  const from =
    parseAddresses(has(data, 'from') ? get(data, 'from') : firstHeader(headers, 'from'))[0] ?? null;
  const replyTo =
    parseAddresses(has(data, 'reply_to') ? get(data, 'reply_to') : firstHeader(headers, 'reply-to'))[0]
      ?.address ?? null;
  return {
    // One the provider client would refuse is no id (the payload's own fields are used).
    emailId: isProviderId(emailId) && !/\s/.test(emailId) ? emailId : null,
    from,
    replyTo,
    to: parseAddresses(has(data, 'to') ? get(data, 'to') : headers.get('to')),
    cc: parseAddresses(has(data, 'cc') ? get(data, 'cc') : headers.get('cc')),
    otherRecipients: [...parseAddresses(get(data, 'received_for')), ...parseAddresses(get(data, 'bcc'))],
    subject: str(data, 'subject', MAX_SUBJECT) ?? decodedHeader(headers, 'subject', reader) ?? null,
    messageId: str(data, 'message_id', 998) ?? firstHeader(headers, 'message-id') ?? null,
    headers,
    html: str(data, 'html'),
    text: str(data, 'text'),
    raw: str(data, 'raw') ?? str(body, 'raw'),
    attachments: Array.isArray(attachments) ? attachments : [],
  };
}

/** Raw MIME given as text, or as base64 of it. */
function rawBytes(raw: string): Buffer {
  const head = raw.slice(0, 4096);
  const looksBase64 = /^[A-Za-z0-9+/=\r\n]+$/.test(head) && !/^[\w-]+:/m.test(head);
  return looksBase64 ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8');
}

const disposition = (v: string | null | undefined) => (v ?? '').toLowerCase().startsWith('inline');
/** Bidirectional controls: in a file name they can show `invoice\u202Efdp.exe` as
 *  `invoiceexe.pdf`. Dropped from attachment names only (they are legitimate in RTL text). */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const filenameOf = (v: unknown) =>
  (typeof v === 'string' && headerSafe(v.replace(BIDI_CONTROLS, ''), 255)) || 'attachment';

function idsOf(headers: Map<string, string[]>, name: string): string[] {
  return parseIdList(headers.get(name) ?? []);
}

/** Fields of a parsed MIME message, merged over what the envelope already says. */
function fromMime(env: Envelope, mail: MimeMail): InboundMail {
  return {
    emailId: env.emailId,
    from: env.from ?? parseAddresses(mail.from)[0] ?? null,
    replyTo: env.replyTo ?? parseAddresses(mail.replyTo)[0]?.address ?? null,
    to: env.to.length ? env.to : parseAddresses(mail.to),
    cc: env.cc.length ? env.cc : parseAddresses(mail.cc),
    otherRecipients: env.otherRecipients,
    subject: env.subject ?? mail.subject ?? '',
    messageId: env.messageId ?? mail.messageId ?? null,
    inReplyTo: parseIdList(mail.inReplyTo ?? []),
    references: parseIdList(mail.references),
    html: mail.html,
    text: mail.text ?? '',
    attachments: mail.attachments.map((a, i) => ({
      sourceKey: `m:${i}`,
      filename: filenameOf(a.filename),
      contentType: safeContentType(a.contentType),
      contentId: a.contentId ? headerSafe(a.contentId, 998) : null,
      inline: a.contentDisposition === 'inline' || a.related,
      load: async () => new Uint8Array(a.content),
    })),
    source: 'raw',
  };
}

/** Attachments given inline in a payload: `{ filename, content_type, content (base64) }`. */
function payloadAttachments(list: unknown[]): AttachmentSource[] {
  const out: AttachmentSource[] = [];
  list.forEach((a, i) => {
    const o = asObject(a);
    const content = o ? str(o, 'content') : null;
    if (!o || content === null) return;
    out.push({
      sourceKey: `i:${i}`,
      filename: filenameOf(get(o, 'filename')),
      contentType: safeContentType(get(o, 'content_type') ?? get(o, 'contentType')),
      contentId: str(o, 'content_id', 998),
      inline: disposition(str(o, 'content_disposition', 100)),
      load: async () => new Uint8Array(Buffer.from(content, 'base64')),
    });
  });
  return out;
}

function fromPayload(env: Envelope): InboundMail {
  return {
    emailId: env.emailId,
    from: env.from,
    replyTo: env.replyTo,
    to: env.to,
    cc: env.cc,
    otherRecipients: env.otherRecipients,
    subject: env.subject ?? '',
    messageId: env.messageId,
    inReplyTo: idsOf(env.headers, 'in-reply-to'),
    references: idsOf(env.headers, 'references'),
    html: env.html,
    text: env.text ?? '',
    attachments: payloadAttachments(env.attachments),
    source: env.html !== null || env.text !== null ? 'payload' : 'none',
  };
}

/** The provider's mail; `undefined` when a permanent failure says it never will be given. */
async function fetchOrGiveUp(
  provider: MailProvider,
  emailId: string,
  opts: { onUnfetchable: (err: ProviderError) => void; signal?: AbortSignal },
) {
  try {
    return await provider.getReceivedEmail(emailId, { signal: opts.signal });
  } catch (e) {
    if (!(e instanceof ProviderError && e.permanent)) throw e;
    opts.onUnfetchable(e);
    return undefined;
  }
}

/** Body source of an inbound mail: the provider API when configured (and the payload names
 *  an email id), else the payload's body fields, else its raw MIME. `null`: the provider does
 *  not know the email (404). Provider failures throw (retry), except a permanent one (an answer
 *  over the size cap): retrying could only end dead, so the payload's own fields are stored. */
export async function loadInboundMail(
  env: Envelope,
  provider: MailProvider | null,
  reader: MailReader,
  opts: {
    onParseError: (err: unknown) => void;
    onUnfetchable: (err: ProviderError) => void;
    signal?: AbortSignal;
  },
): Promise<InboundMail | null> {
  let mail: InboundMail;
  const emailId = env.emailId;
  const got = provider && emailId ? await fetchOrGiveUp(provider, emailId, opts) : undefined;
  if (got === null) return null;
  if (got && provider && emailId) {
    const apiFrom = got.from === null ? [] : parseAddresses(got.from);
    mail = {
      ...fromPayload(env),
      from: env.from ?? apiFrom[0] ?? null,
      replyTo: env.replyTo ?? parseAddresses(firstHeader(got.headers, 'reply-to'))[0]?.address ?? null,
      to: env.to.length ? env.to : parseAddresses(got.to),
      cc: env.cc.length ? env.cc : parseAddresses(got.cc),
      subject: env.subject ?? got.subject ?? '',
      messageId: got.messageId ?? env.messageId,
      inReplyTo: idsOf(got.headers, 'in-reply-to'),
      references: idsOf(got.headers, 'references'),
      html: got.html,
      text: got.text ?? '',
      attachments: got.attachments.map((a) => ({
        sourceKey: `p:${a.id}`,
        filename: filenameOf(a.filename),
        contentType: safeContentType(a.contentType),
        contentId: a.contentId ? headerSafe(a.contentId, 998) : null,
        inline: disposition(a.contentDisposition),
        load: async (signal) =>
          (await provider.getReceivedAttachment(emailId, a.id, { signal }))?.bytes ?? null,
      })),
      source: 'provider',
    };
  } else if (env.html !== null || env.text !== null || env.raw === null) {
    mail = fromPayload(env);
  } else {
    try {
      mail = fromMime(env, await reader.parseMime(rawBytes(env.raw)));
    } catch (e) {
      opts.onParseError(e);
      mail = fromPayload(env);
    }
  }
  // A text body is always stored: derived from the HTML when the mail has none (bounded work:
  // size, depth and time, in the reader).
  if (!mail.text.trim() && mail.html) mail.text = await reader.htmlToText(mail.html);
  mail.subject = headerSafe(mail.subject, MAX_SUBJECT);
  const id = mail.messageId ? bareId(mail.messageId) : null;
  mail.messageId = id;
  return mail;
}
