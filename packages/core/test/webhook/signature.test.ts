import { createHmac, type KeyObject, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { HeaderValue } from '@postern/core';
import { checkSignature, decodeSignature, parseSecrets } from '@postern/core/webhook';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { describe, expect, it } from 'vitest';

interface VectorCase {
  name: string;
  secret: string;
  headers?: Record<string, string>;
  payload?: string;
  now?: number;
  expect: 'valid' | 'error' | 'constructor_error';
}
const vectors = JSON.parse(
  readFileSync(new URL('../fixtures/standard-webhooks/vectors.json', import.meta.url), 'utf8'),
) as { secret: string; positive: VectorCase[]; negative: VectorCase[]; tolerance_seconds: number };

const PREFIXES = ['webhook', 'svix'];
const noWarn = () => {};
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const KEY = Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'base64');
const NOW = 1_700_000_000;

const BODY = '{"type":"email.delivered"}';
const checkInput = () => ({
  headers: {},
  rawBody: Buffer.from(BODY),
  keys: parseSecrets(SECRET, noWarn),
  nowSeconds: NOW,
  toleranceSeconds: 300,
  prefixes: PREFIXES,
});

function check(
  headers: Record<string, HeaderValue>,
  body: string | Uint8Array,
  opts: { secret?: string; now?: number; tolerance?: number; prefixes?: string[] } = {},
) {
  return checkSignature({
    headers,
    rawBody: typeof body === 'string' ? Buffer.from(body) : body,
    keys: parseSecrets(opts.secret ?? SECRET, noWarn),
    nowSeconds: opts.now ?? NOW,
    toleranceSeconds: opts.tolerance ?? 300,
    prefixes: opts.prefixes ?? PREFIXES,
  });
}

const hmac = (key: Buffer, data: string | Buffer) => createHmac('sha256', key).update(data).digest();

function standardHeaders(
  body: string,
  opts: { id?: string; ts?: number; key?: Buffer; prefix?: string } = {},
) {
  const id = opts.id ?? 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W';
  const ts = String(opts.ts ?? NOW);
  const sig = hmac(opts.key ?? KEY, `${id}.${ts}.${body}`).toString('base64');
  const p = opts.prefix ?? 'webhook';
  return { [`${p}-id`]: id, [`${p}-timestamp`]: ts, [`${p}-signature`]: `v1,${sig}` };
}

/** The reference libraries decode every secret as base64, prefixed or not; Postern takes
 *  an unprefixed secret as its UTF-8 bytes. So vectors that use the bare base64 secret are run
 *  with the `whsec_` prefix that says "base64" here (Postern's rule has its own test). */
const asContractSecret = (s: string) => (s.startsWith('whsec_') ? s : `whsec_${s}`);

describe('Standard Webhooks test vectors', () => {
  for (const v of vectors.positive) {
    it(`accepts: ${v.name}`, () => {
      const r = check(v.headers!, v.payload!, {
        secret: asContractSecret(v.secret),
        now: v.now!,
        tolerance: vectors.tolerance_seconds,
      });
      expect(r).toEqual({ ok: true, receipt: `webhook-id:${v.headers!['webhook-id']}` });
    });
  }
  for (const v of vectors.negative.filter((n) => n.expect === 'error')) {
    it(`refuses: ${v.name}`, () => {
      const r = check(v.headers!, v.payload!, {
        secret: asContractSecret(v.secret),
        now: v.now!,
        tolerance: vectors.tolerance_seconds,
      });
      expect(r.ok).toBe(false);
    });
  }
  for (const v of vectors.negative.filter((n) => n.expect === 'constructor_error')) {
    it(`yields no key: ${v.name}`, () => {
      expect(parseSecrets(v.secret, noWarn)).toEqual([]);
    });
  }
});

describe('signatures made by the reference libraries', () => {
  const body = '{"type":"email.delivered","data":{"email_id":"56761188"}}';

  it('a standardwebhooks signature verifies with webhook-* headers', () => {
    const id = 'msg_standard_1';
    const sig = new StandardWebhook(SECRET).sign(id, new Date(NOW * 1000), body);
    const r = check({ 'webhook-id': id, 'webhook-timestamp': String(NOW), 'webhook-signature': sig }, body);
    expect(r).toEqual({ ok: true, receipt: 'webhook-id:msg_standard_1' });
  });

  it('an svix signature verifies with svix-* headers', () => {
    const id = 'msg_svix_1';
    const sig = new SvixWebhook(SECRET).sign(id, new Date(NOW * 1000), body);
    const r = check({ 'svix-id': id, 'svix-timestamp': String(NOW), 'svix-signature': sig }, body);
    expect(r).toEqual({ ok: true, receipt: 'webhook-id:msg_svix_1' });
  });

  it('the libraries verify what we would accept, so both sides agree on the signed bytes', () => {
    const headers = standardHeaders(body);
    const wh = new StandardWebhook(SECRET);
    // The library checks against the real clock, so sign with a current timestamp here.
    const ts = Math.floor(Date.now() / 1000);
    const fresh = standardHeaders(body, { ts });
    expect(wh.verify(body, fresh)).toEqual(JSON.parse(body));
    expect(check(fresh, body, { now: ts }).ok).toBe(true);
    expect(check(headers, body).ok).toBe(true);
  });

  it('a tampered byte fails even when everything else matches', () => {
    const id = 'msg_tamper';
    const sig = new SvixWebhook(SECRET).sign(id, new Date(NOW * 1000), body);
    const headers = { 'svix-id': id, 'svix-timestamp': String(NOW), 'svix-signature': sig };
    const bytes = Buffer.from(body);
    bytes[10] = bytes[10]! ^ 1;
    expect(check(headers, bytes)).toEqual({ ok: false, reason: 'no_valid_signature' });
    expect(check(headers, `${body} `).ok).toBe(false);
  });
});

describe('Standard Webhooks header parsing', () => {
  const body = '{"a":1}';

  it('accepts the signature in hex and in URL-safe base64 without padding', () => {
    const ts = String(NOW);
    const raw = hmac(KEY, `id1.${ts}.${body}`);
    for (const enc of [raw.toString('hex'), raw.toString('hex').toUpperCase(), raw.toString('base64url')]) {
      const r = check(
        { 'webhook-id': 'id1', 'webhook-timestamp': ts, 'webhook-signature': `v1,${enc}` },
        body,
      );
      expect(r.ok).toBe(true);
    }
  });

  it('any one of several v1 signatures verifies; other versions are ignored', () => {
    const h = standardHeaders(body);
    const good = h['webhook-signature']!.slice(3);
    const wrong = randomBytes(32).toString('base64');
    expect(check({ ...h, 'webhook-signature': `v1,${wrong} v1,${good}` }, body).ok).toBe(true);
    expect(check({ ...h, 'webhook-signature': `v1a,${good} v2,${good}` }, body).ok).toBe(false);
    expect(check({ ...h, 'webhook-signature': `  v1,${good}  ` }, body).ok).toBe(true);
  });

  it('refuses a header with more than ten signatures, even with a valid one among them', () => {
    const h = standardHeaders(body);
    const wrong = Array.from({ length: 10 }, () => `v1,${randomBytes(32).toString('base64')}`);
    expect(
      check({ ...h, 'webhook-signature': [...wrong.slice(1), h['webhook-signature']].join(' ') }, body).ok,
    ).toBe(true);
    expect(check({ ...h, 'webhook-signature': [...wrong, h['webhook-signature']].join(' ') }, body)).toEqual({
      ok: false,
      reason: 'too_many_signatures',
    });
  });

  it('refuses truncated, padded-out and odd-length signatures', () => {
    const h = standardHeaders(body);
    const sig = h['webhook-signature']!.slice(3);
    for (const bad of [sig.slice(0, -2), `${sig}AA`, `${sig}=`, sig.replace(/=$/, '==')]) {
      expect(check({ ...h, 'webhook-signature': `v1,${bad}` }, body).ok).toBe(false);
    }
    expect(decodeSignature('ab')).toBeNull();
    expect(decodeSignature('z'.repeat(64))).toBeNull();
  });

  it('decodes base64 signatures only in a canonical spelling of one alphabet', () => {
    // 0xfb 0xff 0xbf spells '+/+/' in standard base64 and '-_-_' in URL-safe, whatever follows.
    const raw = Buffer.from([0xfb, 0xff, 0xbf, 0xfb, 0xff, 0xbf, ...randomBytes(26)]);
    const standard = raw.toString('base64');
    const urlSafe = raw.toString('base64url');
    for (const good of [standard, standard.slice(0, -1), urlSafe, `${urlSafe}=`]) {
      expect(decodeSignature(good)?.equals(raw), good).toBe(true);
    }
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    // The last character carries 4 bits and 2 zero bits: set one of those and the bytes stay the same.
    const strayBits = alphabet[alphabet.indexOf(standard[42]!) + 1]!;
    expect(Buffer.from(`${standard.slice(0, 42)}${strayBits}=`, 'base64').equals(raw)).toBe(true);
    const bad = [
      `-${standard.slice(1)}`, // both alphabets in one signature
      `${standard.slice(0, 3)}_${standard.slice(4)}`,
      `${standard.slice(0, 10)}!${standard.slice(11)}`, // a character outside the alphabet
      `${standard.slice(0, 10)} ${standard.slice(11)}`,
      `${standard.slice(0, 42)}${strayBits}=`, // non-canonical last character
      `${urlSafe}==`,
    ];
    for (const b of bad) expect(decodeSignature(b), b).toBeNull();
  });

  it('takes timestamps as Unix seconds in digits only, within the tolerance either way', () => {
    const at = (ts: string, now = NOW) => {
      const id = 'msg_ts';
      const sig = hmac(KEY, `${id}.${ts}.${body}`).toString('base64');
      return check({ 'webhook-id': id, 'webhook-timestamp': ts, 'webhook-signature': `v1,${sig}` }, body, {
        now,
      });
    };
    expect(at(String(NOW - 300)).ok).toBe(true);
    expect(at(String(NOW + 300)).ok).toBe(true);
    expect(at(String(NOW - 301))).toEqual({ ok: false, reason: 'timestamp_out_of_tolerance' });
    expect(at(String(NOW + 301))).toEqual({ ok: false, reason: 'timestamp_out_of_tolerance' });
    for (const bad of [`+${NOW}`, `${NOW}.0`, ` ${NOW}`, `${NOW}000000`, '-1', '', `${NOW}e0`]) {
      expect(at(bad).ok).toBe(false);
    }
    expect(at(String(NOW), NOW).ok).toBe(true);
  });

  it('honours a configured tolerance', () => {
    const h = standardHeaders(body, { ts: NOW - 30 });
    expect(check(h, body, { tolerance: 30 }).ok).toBe(true);
    expect(check(h, body, { tolerance: 29 }).ok).toBe(false);
  });

  it('refuses a message id with spaces or control characters', () => {
    for (const id of ['has space', 'tab\tid', 'x'.repeat(257)]) {
      const h = standardHeaders(body, { id });
      expect(check(h, body)).toEqual({ ok: false, reason: 'invalid_id' });
    }
  });

  it('checks the id, the timestamp and the signature format before any HMAC of the body', () => {
    // A key createHmac refuses: any check that reached the HMAC would throw.
    const poisoned = { ...checkInput(), keys: [{} as KeyObject] };
    const h = standardHeaders(BODY);
    const refused = (headers: Record<string, HeaderValue>) => checkSignature({ ...poisoned, headers });
    expect(refused({ ...h, 'webhook-id': 'has space' })).toEqual({ ok: false, reason: 'invalid_id' });
    expect(refused({ ...h, 'webhook-timestamp': 'x1' })).toEqual({ ok: false, reason: 'invalid_timestamp' });
    expect(refused({ ...h, 'webhook-timestamp': String(NOW - 3600) })).toEqual({
      ok: false,
      reason: 'timestamp_out_of_tolerance',
    });
    expect(refused({ ...h, 'webhook-signature': 'v1,x '.repeat(11) })).toEqual({
      ok: false,
      reason: 'too_many_signatures',
    });
    for (const sig of ['v1,short', 'v2,' + 'A'.repeat(43), 'v1,' + '!'.repeat(44)]) {
      expect(refused({ ...h, 'webhook-signature': sig })).toEqual({
        ok: false,
        reason: 'no_valid_signature',
      });
    }
    expect(refused({ 'x-mail-timestamp': String(NOW), 'x-mail-signature': 'sha256=nothex' })).toEqual({
      ok: false,
      reason: 'no_valid_signature',
    });
    // A well-formed request reaches the HMAC (so the poisoned key would have been noticed above).
    expect(() => refused(h)).toThrow(TypeError);
  });

  it('needs all three headers of a set', () => {
    const h = standardHeaders(body);
    for (const drop of Object.keys(h)) {
      const partial = { ...h };
      delete partial[drop];
      expect(check(partial, body)).toEqual({ ok: false, reason: 'missing_headers' });
    }
    expect(check({}, body)).toEqual({ ok: false, reason: 'missing_headers' });
  });

  it('passes over a stray or partial header set to the first complete one', () => {
    const svix = standardHeaders(body, { prefix: 'svix' });
    expect(check({ 'webhook-id': 'zz', ...svix }, body)).toMatchObject({ ok: true });
    expect(check({ 'webhook-signature': 'v1,xx', 'webhook-timestamp': '1', ...svix }, body)).toMatchObject({
      ok: true,
    });
    const ts = String(NOW);
    const xMail = { 'x-mail-signature': hmac(KEY, `${ts}.${body}`).toString('hex'), 'x-mail-timestamp': ts };
    expect(check({ 'svix-id': 'zz', 'webhook-signature': 'v1,xx', ...xMail }, body)).toMatchObject({
      ok: true,
    });
    // A complete set decides, right or wrong: it is never passed over for a later one.
    expect(check({ ...standardHeaders(body, { key: randomBytes(32) }), ...svix }, body)).toEqual({
      ok: false,
      reason: 'no_valid_signature',
    });
  });

  it('uses configured prefixes and ignores the others', () => {
    const h = standardHeaders(body, { prefix: 'resend' });
    expect(check(h, body, { prefixes: ['resend'] }).ok).toBe(true);
    expect(check(h, body).ok).toBe(false);
    expect(check(standardHeaders(body, { prefix: 'svix' }), body, { prefixes: ['resend'] }).ok).toBe(false);
  });

  it('any of several secrets in the setting verifies', () => {
    const other = randomBytes(32);
    const setting = `whsec_${randomBytes(32).toString('base64')}  whsec_${other.toString('base64')}`;
    expect(check(standardHeaders(body, { key: other }), body, { secret: setting }).ok).toBe(true);
    expect(check(standardHeaders(body), body, { secret: setting }).ok).toBe(false);
  });

  it('uses a secret without the whsec_ prefix as its UTF-8 bytes, never as base64', () => {
    const secret = 'plain-secret-of-at-least-32-bytes-é';
    const h = standardHeaders(body, { key: Buffer.from(secret, 'utf8') });
    expect(check(h, body, { secret }).ok).toBe(true);
    const v = vectors.positive[0]!;
    const bare = v.secret.slice('whsec_'.length);
    expect(check(v.headers!, v.payload!, { secret: bare, now: v.now! }).ok).toBe(false);
    const utf8Signed = standardHeaders(body, { key: Buffer.from(bare, 'utf8') });
    expect(check(utf8Signed, body, { secret: bare }).ok).toBe(true);
  });
});

describe('x-mail signatures', () => {
  const body = '{"type":"email.received","data":{"to":["a@b.test"]}}';
  const ts = String(NOW);
  const raw = hmac(KEY, `${ts}.${body}`);

  it('accept a bare, sha256= or v1, prefixed signature in hex or base64', () => {
    for (const sig of [
      raw.toString('hex'),
      `sha256=${raw.toString('hex')}`,
      `v1,${raw.toString('base64')}`,
      raw.toString('base64'),
    ]) {
      const r = check({ 'x-mail-signature': sig, 'x-mail-timestamp': ts }, body);
      expect(r.ok).toBe(true);
    }
  });

  it('give the same receipt for one signature in any encoding, another for another timestamp', () => {
    const receipt = (sig: string, t = ts) => {
      const r = check({ 'x-mail-signature': sig, 'x-mail-timestamp': t }, body);
      return r.ok ? r.receipt : r.reason;
    };
    const hex = receipt(raw.toString('hex'));
    expect(hex).toMatch(/^x-mail:/);
    expect(receipt(`sha256=${raw.toString('base64')}`)).toBe(hex);
    const later = String(NOW + 1);
    expect(receipt(hmac(KEY, `${later}.${body}`).toString('hex'), later)).not.toBe(hex);
  });

  it('refuse a wrong, stale or unsigned request', () => {
    const sig = raw.toString('hex');
    expect(check({ 'x-mail-signature': sig, 'x-mail-timestamp': String(NOW + 1) }, body).ok).toBe(false);
    expect(check({ 'x-mail-signature': sig, 'x-mail-timestamp': ts }, body, { now: NOW + 301 })).toEqual({
      ok: false,
      reason: 'timestamp_out_of_tolerance',
    });
    expect(check({ 'x-mail-signature': sig }, body)).toEqual({ ok: false, reason: 'missing_headers' });
    expect(check({ 'x-mail-signature': `sha512=${sig}`, 'x-mail-timestamp': ts }, body).ok).toBe(false);
    // The Standard Webhooks construction does not verify here: the signed bytes differ.
    const std = hmac(KEY, `id.${ts}.${body}`).toString('hex');
    expect(check({ 'x-mail-signature': std, 'x-mail-timestamp': ts }, body).ok).toBe(false);
  });
});

describe('secret setting', () => {
  it('warns once per short secret and never logs the secret itself', () => {
    const warnings: Array<Record<string, unknown>> = [];
    const keys = parseSecrets(`${SECRET} ${'k'.repeat(32)} short`, (f) => warnings.push(f));
    expect(keys).toHaveLength(3);
    expect(warnings).toEqual([
      expect.objectContaining({ event: 'webhook_secret_weak', index: 0, bytes: 24 }),
      expect.objectContaining({ event: 'webhook_secret_weak', index: 2, bytes: 5 }),
    ]);
    expect(JSON.stringify(warnings)).not.toContain('MfKQ9r8');
  });

  it('skips a whsec_ secret that is not base64', () => {
    const warnings: unknown[] = [];
    expect(parseSecrets('whsec_not*base64', (f) => warnings.push(f))).toEqual([]);
    expect(warnings).toHaveLength(1);
  });
});
