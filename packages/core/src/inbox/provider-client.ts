import { ConfigError } from '../errors.js';
import type {
  DownloadedFile,
  MailProvider,
  OutgoingEmail,
  ProviderAttachment,
  ProviderCallOptions,
  ReceivedEmail,
} from '../ports/mail-provider.js';
import { NonPublicAddressError } from '../util/public-address.js';
import { parseWellFormedJson } from '../util/text.js';
import { MAX_TIMER_MS, wholeOption } from '../util/whole-option.js';
import { parseAddresses } from './addresses.js';
import { headerMap } from './headers.js';
import { publicHttpsGet } from './public-fetch.js';

/** The provider API as configuration (Resend-compatible). */
export interface ProviderConfig {
  /** Base URL, e.g. `https://api.resend.com` (`PROVIDER_API_URL`). */
  apiUrl: string;
  /** API token (`PROVIDER_API_TOKEN`). Absent: no provider fetch, replies go through the mailer. */
  token?: string;
  /** Per request, headers and body together. Default 10 s. */
  timeoutMs?: number;
  /** Largest JSON answer read. Default 10 MiB. */
  maxResponseBytes?: number;
  /** Largest attachment downloaded. Default 25 MiB. */
  maxAttachmentBytes?: number;
}

/** A provider call failed. Carries no token, URL query or body. */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    /** Another attempt would fail the same way (an id or answer the client refuses, not a
     *  status: a 401/403 may be a token fixed later, an expired download link is renewed). */
    readonly permanent = false,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

/** A failure another attempt would repeat (the id or answer itself is refused). */
const permanentError = (message: string) => new ProviderError(message, undefined, true);

const MiB = 1024 * 1024;
const MAX_ID = 256;

/** An id from a payload that can name a provider resource: 1 to 256 characters, no control
 *  characters, and not `.` or `..` (they survive percent-encoding and would be resolved as path
 *  steps: `/emails/..` is `/`). */
export function isProviderId(id: unknown): id is string {
  return (
    typeof id === 'string' &&
    id.length > 0 &&
    id.length <= MAX_ID &&
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are refused
    !/[\u0000-\u001f]/.test(id) &&
    // No UTF-8 form, so no URL form either (encodeURIComponent throws).
    id.isWellFormed() &&
    id !== '.' &&
    id !== '..'
  );
}

/** Path segment for an id from a payload: checked, then percent-encoded. */
function segment(id: string): string {
  if (!isProviderId(id)) throw permanentError('invalid provider id');
  return encodeURIComponent(id);
}

async function readCapped(res: Response, max: number): Promise<Uint8Array> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > max) {
    await res.body?.cancel();
    throw permanentError('provider answer too large');
  }
  if (!res.body) return new Uint8Array();
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      throw permanentError('provider answer too large');
    }
    chunks.push(value);
  }
  const all = Buffer.concat(chunks);
  return new Uint8Array(all.buffer, all.byteOffset, all.byteLength);
}

const str = (v: unknown, max = 100_000): string | null => (typeof v === 'string' ? v.slice(0, max) : null);

function attachmentList(v: unknown): ProviderAttachment[] {
  if (!Array.isArray(v)) return [];
  const out: ProviderAttachment[] = [];
  // Every entry: the consumer stores at most 500 per message and logs the rest.
  for (const a of v) {
    if (typeof a !== 'object' || a === null) continue;
    const o = a as Record<string, unknown>;
    const id = str(o.id, MAX_ID);
    if (!id) continue;
    out.push({
      id,
      filename: str(o.filename, 1000),
      contentType: str(o.content_type, 255),
      size: typeof o.size === 'number' && Number.isFinite(o.size) ? o.size : null,
      contentId: str(o.content_id, 1000),
      contentDisposition: str(o.content_disposition, 255),
    });
  }
  return out;
}

/** Parses `GET /emails/receiving/{id}`; tolerant of missing fields, never trusts their types. */
export function toReceivedEmail(body: unknown): ReceivedEmail {
  const o = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  return {
    from: parseAddresses(o.from)[0]?.display ?? null,
    to: parseAddresses(o.to).map((a) => a.display),
    cc: parseAddresses(o.cc).map((a) => a.display),
    subject: str(o.subject, 998),
    html: str(o.html, 20 * MiB),
    text: str(o.text, 20 * MiB),
    headers: headerMap(o.headers),
    messageId: str(o.message_id, 998),
    attachments: attachmentList(o.attachments),
  };
}

/** Host names an `http:` API URL may name: this machine only (a fake provider in tests, a
 *  local relay), where the token does not cross a network in clear text. */
function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** A Resend-compatible provider client over global `fetch`: Bearer token, ids percent-encoded
 *  and length-capped, no redirects followed, answers size-capped, every call timed out.
 *  The API URL is https (http for loopback only). `download_url`s share the API's origin, or
 *  are https to public addresses only (checked at the connect, see `publicHttpsGet`); the
 *  token goes only to the API's origin. 404 -> `null`; every other failure throws
 *  `ProviderError` (the outbox retries). */
export function resendProvider(config: ProviderConfig & { token: string }): MailProvider {
  let base: URL;
  try {
    base = new URL(config.apiUrl);
  } catch {
    throw new ConfigError('provider.apiUrl is not a URL');
  }
  if (base.protocol !== 'https:' && base.protocol !== 'http:') {
    throw new ConfigError('provider.apiUrl must be http(s)');
  }
  // The Bearer token goes with every call: in clear text only to this machine.
  if (base.protocol === 'http:' && !isLoopbackHost(base.hostname)) {
    throw new ConfigError('provider.apiUrl must be https (http is for a loopback host only)');
  }
  if (!config.token) throw new ConfigError('provider.token is required');
  const root = base.href.replace(/\/+$/, '');
  const timeoutMs = wholeOption('provider.timeoutMs', config.timeoutMs, 10_000, 1, MAX_TIMER_MS);
  const maxResponse = wholeOption('provider.maxResponseBytes', config.maxResponseBytes, 10 * MiB);
  const maxAttachment = wholeOption('provider.maxAttachmentBytes', config.maxAttachmentBytes, 25 * MiB);

  async function call(
    url: URL,
    init: { method?: string; json?: unknown; headers?: Record<string, string>; cancel?: AbortSignal },
    max: number,
  ): Promise<{ status: number; body: Uint8Array; contentType: string | null }> {
    const headers: Record<string, string> = { accept: 'application/json', ...init.headers };
    if (url.origin === base.origin) headers.authorization = `Bearer ${config.token}`;
    if (init.json !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = init.cancel ? AbortSignal.any([timeout, init.cancel]) : timeout;
    try {
      // The configured API is trusted wherever it is; any other origin (a `download_url`) is
      // a stranger's choice, fetched from public addresses only.
      res =
        url.origin === base.origin
          ? await fetch(url, {
              method: init.method ?? 'GET',
              headers,
              body: init.json === undefined ? undefined : JSON.stringify(init.json),
              redirect: 'manual',
              signal,
            })
          : await publicHttpsGet(url, { headers, signal });
      if (res.status >= 300 && res.status < 400) {
        await res.body?.cancel();
        throw new ProviderError('provider redirected', res.status);
      }
      const body = await readCapped(res, max);
      return { status: res.status, body, contentType: res.headers.get('content-type') };
    } catch (e) {
      if (e instanceof ProviderError) throw e;
      if (e instanceof NonPublicAddressError)
        throw permanentError('download_url refused: not a public address');
      if (init.cancel?.aborted) throw new ProviderError('provider call cancelled');
      throw new ProviderError(timeout.aborted ? 'provider timed out' : 'provider unreachable');
    }
  }

  function json(body: Uint8Array): unknown {
    try {
      return parseWellFormedJson(Buffer.from(body).toString('utf8'));
    } catch {
      throw new ProviderError('provider answer is not JSON');
    }
  }

  async function getJson(path: string, cancel?: AbortSignal): Promise<unknown | null> {
    const r = await call(new URL(root + path), { cancel }, maxResponse);
    if (r.status === 404) return null;
    if (r.status < 200 || r.status >= 300) throw new ProviderError('provider error', r.status);
    return json(r.body);
  }

  return {
    async getReceivedEmail(emailId, options: ProviderCallOptions = {}) {
      const body = await getJson(`/emails/receiving/${segment(emailId)}`, options.signal);
      return body === null ? null : toReceivedEmail(body);
    },

    async getReceivedAttachment(
      emailId,
      attachmentId,
      options: ProviderCallOptions = {},
    ): Promise<DownloadedFile | null> {
      const meta = await getJson(
        `/emails/receiving/${segment(emailId)}/attachments/${segment(attachmentId)}`,
        options.signal,
      );
      if (meta === null) return null;
      const o = (typeof meta === 'object' && meta !== null ? meta : {}) as Record<string, unknown>;
      const link = str(o.download_url, 8192);
      let url: URL;
      try {
        url = new URL(link ?? '');
      } catch {
        throw permanentError('attachment has no download_url');
      }
      if (url.protocol !== 'https:' && url.origin !== base.origin) {
        throw permanentError('download_url refused: not https and not the provider API origin');
      }
      const r = await call(url, { headers: { accept: '*/*' }, cancel: options.signal }, maxAttachment);
      if (r.status === 404) return null;
      if (r.status < 200 || r.status >= 300) throw new ProviderError('attachment download failed', r.status);
      return { bytes: r.body, contentType: str(o.content_type, 255) ?? r.contentType };
    },

    async send(mail: OutgoingEmail) {
      const idempotency = mail.headers['Message-ID'];
      const r = await call(
        new URL(`${root}/emails`),
        {
          method: 'POST',
          json: {
            from: mail.from,
            to: mail.to,
            ...(mail.cc?.length ? { cc: mail.cc } : {}),
            subject: mail.subject,
            text: mail.text,
            ...(mail.html === undefined ? {} : { html: mail.html }),
            headers: mail.headers,
          },
          headers: idempotency ? { 'idempotency-key': idempotency.slice(0, 256) } : {},
        },
        maxResponse,
      );
      if (r.status < 200 || r.status >= 300) throw new ProviderError('provider refused the email', r.status);
      const id = str((json(r.body) as Record<string, unknown> | null)?.id, MAX_ID);
      if (!id) throw new ProviderError('provider answer has no id');
      return { id };
    },
  };
}
