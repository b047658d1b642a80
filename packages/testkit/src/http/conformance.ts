import type { Postern } from '@postern/core';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

type Json = Record<string, any>;

// ajv-formats is CommonJS with a default export.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as unknown as (ajv: Ajv2020) => void;

const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);
// Not in ajv-formats; request fields only, but known so that nothing is skipped in silence.
ajv.addFormat('idn-email', /^[^@\s]+@[^@\s]+$/u);
/** Compiled once per distinct schema, across every scenario's instance. */
const validators = new Map<string, ValidateFunction>();

function validator(schema: Json): ValidateFunction {
  const key = JSON.stringify(schema);
  let v = validators.get(key);
  if (!v) {
    v = ajv.compile(schema);
    validators.set(key, v);
  }
  return v;
}

/** Statuses any route may answer outside its own list (documented under `default`): a slow or
 *  oversized request head. Never a 500. */
const ANY_ROUTE = new Set([408, 431]);

/** The schema with the document's `$ref`s to its components put in place. */
function inline(schema: unknown, d: Json): unknown {
  if (Array.isArray(schema)) return schema.map((s) => inline(s, d));
  if (typeof schema !== 'object' || schema === null) return schema;
  const ref = (schema as Json).$ref;
  if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) {
    return inline(d.components.schemas[ref.slice('#/components/schemas/'.length)], d);
  }
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, inline(v, d)]));
}

/** A header value as its schema's type: the document describes `Retry-After` as an integer. */
function headerValue(raw: string, schema: Json): unknown {
  if (schema.type !== 'integer' && schema.type !== 'number') return raw;
  return /^-?\d+(?:\.\d+)?$/.test(raw) ? Number(raw) : raw;
}

/** A header the response lists as `required` is there, and every listed header that is there
 *  matches its schema. */
function checkHeaders(listed: Json | undefined, headers: Headers, d: Json): string | null {
  for (const [name, h] of Object.entries(listed ?? {}) as Array<[string, Json]>) {
    const raw = headers.get(name);
    if (raw === null) {
      if (h.required === true) return `no ${name} header, which the document requires`;
      continue;
    }
    const validate = validator(inline(h.schema ?? {}, d) as Json);
    if (!validate(headerValue(raw, h.schema ?? {})))
      return `${name}: ${JSON.stringify(raw)} does not match the document: ${ajv.errorsText(validate.errors)}`;
  }
  return null;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Checks answers against the OpenAPI document the instance serves: the status is one the
 *  operation lists, the headers it requires are there and those it lists match their schemas,
 *  and a JSON or problem body matches its schema. Requests to paths or
 *  methods the document does not list are not checked. Returns what does not conform. */
export function openApiConformance(ph: Postern) {
  let doc: Promise<{ d: Json; matchers: Array<[RegExp, string]> }> | undefined;
  const load = async () => {
    const route = ph.routes.find((r) => r.area === 'auth' && r.path === '/openapi.json');
    const res = route && (await ph.handle({ method: 'GET', path: route.fullPath, headers: {} }));
    if (res?.status !== 200) throw new Error('openApiConformance: the instance serves no OpenAPI document');
    const d = JSON.parse(String(res.body)) as Json;
    // Literal paths before templated ones, so `/x/{id}` never shadows `/x/list`.
    const matchers = Object.keys(d.paths)
      .sort((a, b) => Number(a.includes('{')) - Number(b.includes('{')))
      .map((p): [RegExp, string] => [new RegExp(`^${escapeRegExp(p).replace(/\\\{\w+\\\}/g, '[^/]+')}$`), p]);
    return { d, matchers };
  };

  return async function check(method: string, url: string, res: Response): Promise<string | null> {
    doc ??= load();
    const { d, matchers } = await doc;
    const path = new URL(url).pathname;
    const matched = matchers.find(([re]) => re.test(path));
    const op = matched && (d.paths[matched[1]][method.toLowerCase()] as Json | undefined);
    if (!op) return null;
    const where = `${method} ${path} -> ${res.status}`;
    const documented = op.responses[String(res.status)] as Json | undefined;
    if (!documented && !ANY_ROUTE.has(res.status)) return `${where}: status not in the OpenAPI document`;
    const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    const response = (documented ?? op.responses.default) as Json;
    const content = response.content as Json | undefined;
    if (content && !content[type] && !content['*/*']) {
      return `${where}: ${type || 'no content type'}, but the document lists ${Object.keys(content)}`;
    }
    const schema = content?.[type]?.schema as Json | undefined;
    const headerProblem = () => {
      const found = checkHeaders(response.headers, res.headers, d);
      return found && `${where}: ${found}`;
    };
    if (!schema || (type !== 'application/json' && type !== 'application/problem+json'))
      return headerProblem();
    const body: unknown = await res.clone().json();
    const validate = validator(inline(schema, d) as Json);
    if (!validate(body))
      return `${where}: body does not match the document: ${ajv.errorsText(validate.errors)}`;
    if (type === 'application/problem+json' && (body as Json).status !== res.status) {
      return `${where}: problem body says status ${(body as Json).status}`;
    }
    return headerProblem();
  };
}
