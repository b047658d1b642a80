import type { RouteDef } from '@postern/core/internal';
import fc from 'fast-check';

/** One generated request: everything a hostile or broken client controls. */
export interface JunkRequest {
  path: string;
  headers: Record<string, string>;
  body: Uint8Array | string | undefined;
}

const headerChars = fc.mapToConstant({ num: 95, build: (v) => String.fromCharCode(0x20 + v) });
/** Header values fetch accepts: printable ASCII, trimmed (fetch trims them anyway). */
const headerValue = fc.string({ unit: headerChars, maxLength: 300 }).map((s) => s.trim());
const tokenChars = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789-_.~+/='.split(''));
const token = fc.string({ unit: tokenChars, minLength: 1, maxLength: 600 });

const contentType = fc.oneof(
  fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'APPLICATION/JSON',
    'application/problem+json',
    'application/vnd.api+json; charset=latin1',
    'text/plain',
    'text/json',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=----x',
    'application/octet-stream',
    'json',
    '*/*',
    'application/json;',
    'application/json; charset="',
    '',
  ),
  headerValue,
);

const authorization = (validToken?: string) =>
  fc.oneof(
    fc.constant(validToken ? `Bearer ${validToken}` : 'Bearer x'),
    token.map((t) => `Bearer ${t}`),
    fc.tuple(token, token, token).map((p) => `Bearer ${p.join('.')}`),
    headerValue,
  );

/** Headers the HTTP client owns (fetch refuses or rewrites them). */
const transportHeaders = new Set([
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'expect',
  'te',
  'trailer',
  'proxy-connection',
  'http2-settings',
]);

/** Header names an attacker would try, plus random ones. */
const headerName = fc.oneof(
  fc.constantFrom(
    'x-forwarded-for',
    'forwarded',
    'accept',
    'accept-language',
    'content-encoding',
    'origin',
    'cookie',
    'user-agent',
    'webhook-id',
    'webhook-timestamp',
    'webhook-signature',
    'svix-id',
    'svix-timestamp',
    'svix-signature',
    'x-mail-signature',
    'x-mail-timestamp',
    'x-http-method-override',
  ),
  fc
    .string({
      unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz-'.split('')),
      minLength: 1,
      maxLength: 30,
    })
    .filter((n) => !transportHeaders.has(n)),
);

/** JSON values that stress validation: wrong types, huge strings, deep nesting, proto keys. */
const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.string({ maxLength: 5000 }),
  fc.string({ unit: 'grapheme', maxLength: 300 }),
  fc.constantFrom(
    '',
    ' ',
    'a@b',
    'a@b.c',
    'ADMIN@EXAMPLE.COM',
    '\u0000',
    'null',
    '__proto__',
    '💥'.repeat(70),
  ),
  fc.constantFrom(0, -1, 1e308, Number.MAX_SAFE_INTEGER, true, false, null),
  fc.constant(JSON.parse('{"__proto__":{"admin":true},"constructor":{"prototype":{}}}')),
);

function bodyKeys(route: RouteDef): string[] {
  const shape = (route.body as { shape?: Record<string, unknown> } | undefined)?.shape;
  return shape ? Object.keys(shape) : [];
}

/** Bodies: raw bytes, text, any JSON, and objects shaped like the route's own schema. */
function body(route: RouteDef): fc.Arbitrary<Uint8Array | string | undefined> {
  const keys = bodyKeys(route);
  const key =
    keys.length > 0 ? fc.oneof(fc.constantFrom(...keys), fc.string({ maxLength: 20 })) : fc.string();
  const shaped = fc.dictionary(key, nastyValue, { maxKeys: keys.length + 2 }).map((o) => JSON.stringify(o));
  return fc.oneof(
    fc.constant(undefined),
    shaped,
    shaped,
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc.string({ maxLength: 500 }),
    fc.uint8Array({ maxLength: 2048 }),
    fc.constantFrom('{', '{"a":', '[]', 'null', '""', '{"__proto__":{"x":1}}', '\uFEFF{}', '{}'.repeat(1000)),
  );
}

const paramValue = fc.oneof(
  fc.string({ maxLength: 60 }).map((s) => encodeURIComponent(s) || 'x'),
  fc.constantFrom(
    '1',
    '00000000-0000-0000-0000-000000000000',
    '..',
    '%2e%2e',
    'a%2Fb',
    '%00',
    'x'.repeat(300),
  ),
);

/** A request aimed at `route`: its path (params and query generated), junk headers and body. */
export function junkRequest(
  route: RouteDef & { fullPath: string },
  validToken?: string,
): fc.Arbitrary<JunkRequest> {
  const segments = route.fullPath.split('/');
  const path = fc
    .tuple(
      fc.tuple(...segments.map((s) => (s.startsWith(':') ? paramValue : fc.constant(s)))),
      fc.option(fc.string({ maxLength: 40 }).map(encodeURIComponent), { nil: undefined }),
    )
    .map(([parts, query]) => parts.join('/') + (query === undefined ? '' : `?${query}`));
  const headers = fc
    .record(
      {
        'content-type': contentType,
        authorization: authorization(validToken),
        extra: fc.dictionary(headerName, headerValue, { maxKeys: 4 }),
      },
      { requiredKeys: [] },
    )
    .map(({ extra, ...known }) => {
      const out: Record<string, string> = { ...extra };
      for (const [k, v] of Object.entries(known)) if (v !== undefined) out[k] = v;
      return out;
    });
  return fc.record({ path, headers, body: body(route) });
}
