import { createSecretKey, type KeyObject } from 'node:crypto';
import type { PosternContext } from '../context.js';

export const WEBHOOK_SECRET_SETTING = 'inbox.mail.webhook-secret';

/** Below this many bytes a secret is weak (HMAC-SHA-256 keys should match the hash size). */
const MIN_SECRET_BYTES = 32;
const WHSEC = 'whsec_';
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/** Turns the setting into HMAC keys: secrets separated by white space; `whsec_<base64>` is
 *  decoded, anything else is its UTF-8 bytes. Unusable entries are skipped with a warning. */
export function parseSecrets(
  raw: string,
  warn: (fields: Record<string, unknown>, msg: string) => void,
): KeyObject[] {
  const keys: KeyObject[] = [];
  for (const [index, secret] of raw.split(/\s+/).filter(Boolean).entries()) {
    let bytes: Buffer;
    if (secret.startsWith(WHSEC)) {
      const b64 = secret.slice(WHSEC.length);
      if (!BASE64.test(b64)) {
        warn(
          { event: 'webhook_secret_invalid', index },
          'webhook secret with whsec_ prefix is not base64; skipped',
        );
        continue;
      }
      bytes = Buffer.from(b64, 'base64');
    } else {
      bytes = Buffer.from(secret, 'utf8');
    }
    if (bytes.byteLength === 0) continue;
    if (bytes.byteLength < MIN_SECRET_BYTES) {
      warn(
        { event: 'webhook_secret_weak', index, bytes: bytes.byteLength, minBytes: MIN_SECRET_BYTES },
        'webhook secret is shorter than 32 bytes',
      );
    }
    keys.push(createSecretKey(bytes));
  }
  return keys;
}

/** Reads the secret setting per request (rotation without restart). Parsing is cached per
 *  distinct setting value, so each value is decoded, and warned about, once. Synchronous
 *  settings stay synchronous (no promise on the hot path). */
export function createSecretReader(ctx: PosternContext): () => KeyObject[] | Promise<KeyObject[]> {
  let lastRaw: string | undefined;
  let lastKeys: KeyObject[] = [];
  const keysOf = (value: unknown): KeyObject[] => {
    const raw = typeof value === 'string' ? value : '';
    if (raw !== lastRaw) {
      lastKeys = parseSecrets(raw, (fields, msg) => ctx.logger.warn(fields, msg));
      lastRaw = raw;
    }
    return lastKeys;
  };
  return () => {
    const value = ctx.settings.get(WEBHOOK_SECRET_SETTING);
    return typeof (value as PromiseLike<unknown> | undefined)?.then === 'function'
      ? Promise.resolve(value).then(keysOf)
      : keysOf(value);
  };
}
