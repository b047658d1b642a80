import { createHash, createHmac, type KeyObject, timingSafeEqual } from 'node:crypto';
import type { HeaderValue } from '../http/types.js';

/** Why a signature was refused (logged, never sent). */
export type SignatureRejection =
  | 'missing_headers'
  | 'invalid_id'
  | 'invalid_timestamp'
  | 'timestamp_out_of_tolerance'
  | 'too_many_signatures'
  | 'no_valid_signature';

export type SignatureCheck =
  | {
      ok: true;
      /** Dedupe key of this delivery: the `webhook-id`, or a hash of an `x-mail-*` (timestamp, signature). */
      receipt: string;
    }
  | { ok: false; reason: SignatureRejection };

export interface SignatureInput {
  headers: Record<string, HeaderValue>;
  rawBody: Uint8Array;
  keys: readonly KeyObject[];
  nowSeconds: number;
  toleranceSeconds: number;
  /** Standard Webhooks header prefixes, e.g. `['webhook', 'svix']`. */
  prefixes: readonly string[];
}

const MAX_SIGNATURES = 10;
const SHA256_BYTES = 32;
const HEX = /^[0-9a-fA-F]{64}$/;
const TIMESTAMP = /^\d{1,12}$/;
/** Printable ASCII without spaces; it becomes part of the signed bytes and of the dedupe key. */
const MESSAGE_ID = /^[\x21-\x7e]{1,256}$/;

interface HeaderNames {
  id: string;
  timestamp: string;
  signature: string;
}
/** Header names per prefix, built once (the hot path does no string building for them). */
const headerNames = new Map<string, HeaderNames>();
function namesOf(prefix: string): HeaderNames {
  let n = headerNames.get(prefix);
  if (!n) {
    n = { id: `${prefix}-id`, timestamp: `${prefix}-timestamp`, signature: `${prefix}-signature` };
    headerNames.set(prefix, n);
  }
  return n;
}

function one(headers: Record<string, HeaderValue>, name: string): string | undefined {
  const v = headers[name];
  if (Array.isArray(v)) return v.length === 1 ? v[0] : undefined;
  return v;
}

/** A signature as 32 bytes, from hex or base64 (standard or URL-safe, padding optional); null
 *  for anything else (wrong length included). Node's base64 decoder skips characters outside
 *  the alphabet, so the bytes are taken only when they re-encode to exactly what was sent (two
 *  native calls; the pattern test they replace was the dearest check before the HMAC). */
export function decodeSignature(sig: string): Buffer | null {
  if (sig.length === 64) return HEX.test(sig) ? Buffer.from(sig, 'hex') : null;
  if (sig.length !== 43 && sig.length !== 44) return null;
  const bytes = Buffer.from(sig, 'base64');
  if (bytes.byteLength !== SHA256_BYTES) return null;
  const standard = bytes.toString('base64');
  if (sig === standard || sig === standard.slice(0, -1)) return bytes;
  const urlSafe = bytes.toString('base64url');
  return sig === urlSafe || sig === `${urlSafe}=` ? bytes : null;
}

function withinTolerance(timestamp: string, input: SignatureInput): SignatureRejection | null {
  if (!TIMESTAMP.test(timestamp)) return 'invalid_timestamp';
  return Math.abs(input.nowSeconds - Number(timestamp)) > input.toleranceSeconds
    ? 'timestamp_out_of_tolerance'
    : null;
}

/** True when one of `candidates` is HMAC-SHA-256(key, prefix + body) for one of the keys. */
function matches(input: SignatureInput, prefix: string, candidates: readonly Buffer[]): boolean {
  for (const key of input.keys) {
    const expected = createHmac('sha256', key).update(prefix).update(input.rawBody).digest();
    for (const c of candidates) if (timingSafeEqual(expected, c)) return true;
  }
  return false;
}

/** Standard Webhooks: signed `${id}.${timestamp}.${body}`, header `v1,<sig> v1,<sig> ...`. */
function checkStandard(input: SignatureInput, names: HeaderNames): SignatureCheck {
  const id = one(input.headers, names.id);
  const timestamp = one(input.headers, names.timestamp);
  const raw = input.headers[names.signature];
  const header = Array.isArray(raw) ? raw.join(' ') : raw;
  if (id === undefined || timestamp === undefined || header === undefined) {
    return { ok: false, reason: 'missing_headers' };
  }
  if (!MESSAGE_ID.test(id)) return { ok: false, reason: 'invalid_id' };
  const late = withinTolerance(timestamp, input);
  if (late) return { ok: false, reason: late };
  const entries = header.includes(' ') ? header.split(' ').filter(Boolean) : [header];
  if (entries.length > MAX_SIGNATURES) return { ok: false, reason: 'too_many_signatures' };
  const candidates: Buffer[] = [];
  for (const entry of entries) {
    if (!entry.startsWith('v1,')) continue;
    const sig = decodeSignature(entry.slice(3));
    if (sig) candidates.push(sig);
  }
  if (candidates.length === 0 || !matches(input, `${id}.${timestamp}.`, candidates)) {
    return { ok: false, reason: 'no_valid_signature' };
  }
  return { ok: true, receipt: `webhook-id:${id}` };
}

/** `x-mail-*`: signed `${timestamp}.${body}`, header `<sig>`, `sha256=<sig>` or `v1,<sig>`. */
function checkXMail(input: SignatureInput): SignatureCheck {
  const header = one(input.headers, 'x-mail-signature');
  const timestamp = one(input.headers, 'x-mail-timestamp');
  if (header === undefined || timestamp === undefined) return { ok: false, reason: 'missing_headers' };
  const late = withinTolerance(timestamp, input);
  if (late) return { ok: false, reason: late };
  const trimmed = header.trim();
  const bare = trimmed.startsWith('sha256=')
    ? trimmed.slice(7)
    : trimmed.startsWith('v1,')
      ? trimmed.slice(3)
      : trimmed;
  const sig = decodeSignature(bare);
  if (!sig || !matches(input, `${timestamp}.`, [sig])) return { ok: false, reason: 'no_valid_signature' };
  // The decoded bytes, so the same signature re-encoded (hex vs base64) is the same replay.
  const digest = createHash('sha256').update(`${timestamp}.`).update(sig).digest('base64url');
  return { ok: true, receipt: `x-mail:${digest}` };
}

/** Verifies a webhook request's signature over its exact raw bytes. The first complete header
 *  set decides: each Standard Webhooks prefix in order, then `x-mail-*`. A stray or partial
 *  set (a proxy's leftover `webhook-id`) is passed over rather than refusing a valid one. */
export function checkSignature(input: SignatureInput): SignatureCheck {
  const h = input.headers;
  for (const prefix of input.prefixes) {
    const names = namesOf(prefix);
    if (h[names.signature] !== undefined && h[names.id] !== undefined && h[names.timestamp] !== undefined) {
      return checkStandard(input, names);
    }
  }
  return checkXMail(input);
}
