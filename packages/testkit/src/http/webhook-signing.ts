import { createHmac, randomUUID } from 'node:crypto';

/** HMAC key of a webhook secret: `whsec_<base64>` is decoded, anything else is
 *  its UTF-8 bytes. Written out here, not imported, so the suite checks the core independently. */
export function webhookKey(secret: string): Buffer {
  return secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret, 'utf8');
}

function hmac(secret: string, ...parts: Array<string | Uint8Array>): Buffer {
  const h = createHmac('sha256', webhookKey(secret));
  for (const p of parts) h.update(p);
  return h.digest();
}

export interface StandardSignOptions {
  secret: string;
  body: string | Uint8Array;
  /** Unix seconds. */
  timestamp: number;
  id?: string;
  /** Header prefix: `webhook` (default), `svix`, or a configured one. */
  prefix?: string;
  encoding?: 'base64' | 'hex';
}

/** Standard Webhooks headers: `v1,<sig>` over `${id}.${timestamp}.${body}`. */
export function standardWebhookHeaders(o: StandardSignOptions): Record<string, string> {
  const id = o.id ?? `msg_${randomUUID()}`;
  const ts = String(o.timestamp);
  const sig = hmac(o.secret, `${id}.${ts}.`, o.body).toString(o.encoding ?? 'base64');
  const p = o.prefix ?? 'webhook';
  return { [`${p}-id`]: id, [`${p}-timestamp`]: ts, [`${p}-signature`]: `v1,${sig}` };
}

export interface XMailSignOptions {
  secret: string;
  body: string | Uint8Array;
  timestamp: number;
  encoding?: 'base64' | 'hex';
  /** Written before the signature: '' (default), `sha256=` or `v1,`. */
  prefix?: '' | 'sha256=' | 'v1,';
}

/** `x-mail-signature` over `${timestamp}.${body}` and `x-mail-timestamp`. */
export function xMailHeaders(o: XMailSignOptions): Record<string, string> {
  const ts = String(o.timestamp);
  const sig = hmac(o.secret, `${ts}.`, o.body).toString(o.encoding ?? 'hex');
  return { 'x-mail-signature': `${o.prefix ?? ''}${sig}`, 'x-mail-timestamp': ts };
}
