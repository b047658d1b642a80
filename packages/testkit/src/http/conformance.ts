import type { Gatehouse } from '@gatehouse/core';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

type Json = Record<string, any>;

// ajv-formats is CommonJS with a default export.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as unknown as (ajv: Ajv2020) => void;

const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);
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
 *  oversized request head, and the 500 a broken store or bug gets. */
const ANY_ROUTE = new Set([408, 431, 500]);

/** Checks answers against the OpenAPI document the instance serves: the status is one the
 *  operation lists, and a JSON or problem body matches its schema. Requests to paths or
 *  methods the document does not list are not checked. Returns what does not conform. */
export function openApiConformance(gh: Gatehouse) {
  let doc: Promise<Json> | undefined;
  const load = async (): Promise<Json> => {
    const route = gh.routes.find((r) => r.area === 'auth' && r.path === '/openapi.json');
    if (!route) return { paths: {} };
    const res = await gh.handle({ method: 'GET', path: route.fullPath, headers: {} });
    return JSON.parse(String(res?.body ?? '{"paths":{}}')) as Json;
  };
  const resolve = (schema: Json, d: Json): Json =>
    schema.$ref === '#/components/schemas/Problem' ? d.components.schemas.Problem : schema;

  return async function check(method: string, url: string, res: Response): Promise<string | null> {
    doc ??= load();
    const d = await doc;
    const path = new URL(url).pathname;
    const entry = Object.entries(d.paths as Record<string, Json>).find(([p]) =>
      new RegExp(`^${p.replace(/\{\w+\}/g, '[^/]+')}$`).test(path),
    );
    const op = entry?.[1][method.toLowerCase()] as Json | undefined;
    if (!op) return null;
    const where = `${method} ${path} -> ${res.status}`;
    const documented = op.responses[String(res.status)] as Json | undefined;
    if (!documented && !ANY_ROUTE.has(res.status)) return `${where}: status not in the OpenAPI document`;
    const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
    if (type !== 'application/json' && type !== 'application/problem+json') return null;
    const content = (documented ?? op.responses.default).content as Json | undefined;
    const schema = content?.[type]?.schema as Json | undefined;
    if (!schema) {
      return content ? `${where}: ${type} answer, but the document lists ${Object.keys(content)}` : null;
    }
    const body: unknown = await res.clone().json();
    const validate = validator(resolve(schema, d));
    if (!validate(body))
      return `${where}: body does not match the document: ${ajv.errorsText(validate.errors)}`;
    if (type === 'application/problem+json' && (body as Json).status !== res.status) {
      return `${where}: problem body says status ${(body as Json).status}`;
    }
    return null;
  };
}
