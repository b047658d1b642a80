import { type ZodType, z } from 'zod';
import pkg from '../../package.json' with { type: 'json' };
import { type ErrorCode, errorStatus, errorTitle } from '../errors.js';
import { BEARER_CHALLENGES } from './bearer.js';
import type { MountedRoute, RouteDef } from './types.js';

type Json = Record<string, unknown>;

const problemRef = { $ref: '#/components/schemas/Problem' };

/** RFC 9457 body of every error. */
const problemSchema: Json = {
  type: 'object',
  required: ['type', 'title', 'status', 'code'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    code: { type: 'string' },
    detail: { type: 'string' },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['path', 'message'],
        properties: { path: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
  // A `validation_failed` answer always says what failed.
  if: { required: ['code'], properties: { code: { const: 'validation_failed' } } },
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, never awaited.
  then: { required: ['errors'], properties: { errors: { minItems: 1 } } },
};

function jsonSchema(schema: ZodType, io: 'input' | 'output'): Json {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Json;
  return rest;
}

/** The codes whose answers always carry `Retry-After` (a 429, and a 503 when a
 *  store or the provider is down; a webhook secret that is not configured is not a wait). */
const WAIT_CODES: readonly ErrorCode[] = ['rate_limited', 'unavailable'];

/** `Retry-After` of a 429 or 503; required where every code of the status carries it. */
const retryAfter = (required: boolean) => ({
  'Retry-After': {
    description: 'Seconds to wait before trying again',
    required,
    schema: { type: 'integer', minimum: 1 },
  },
});

/** `WWW-Authenticate` of a Bearer route's 401 (RFC 6750 3.1); required where the only 401 is a
 *  refused token (a route may also refuse, say, a wrong current password, without a challenge). */
const bearerChallenge = (required: boolean) => ({
  'WWW-Authenticate': {
    description: '`Bearer`, with `error="invalid_token"` when a token was sent',
    required,
    schema: { type: 'string', enum: Object.values(BEARER_CHALLENGES) },
  },
});

/** `Set-Cookie` of a route that sets, rotates or clears a browser session's refresh cookie. */
const refreshCookieHeader = (kind: NonNullable<MountedRoute['refreshCookie']>) => ({
  'Set-Cookie': {
    description:
      kind === 'ends'
        ? 'Clears the refresh cookie when the token came from it'
        : "A browser session's refresh token (HttpOnly, Secure, SameSite, Path = the auth mount point); the JSON then has no `refreshToken`",
    required: false,
    schema: { type: 'string' },
  },
});

/** A problem answer; `codes`: the only `code` values it can carry (none: any). */
const problem = (
  description: string,
  status: number,
  codes: readonly ErrorCode[] = [],
  challenge = false,
) => {
  const only = (allowed: readonly ErrorCode[]) => codes.length > 0 && codes.every((c) => allowed.includes(c));
  const headers =
    status === 429 || status === 503
      ? retryAfter(only(WAIT_CODES))
      : challenge && status === 401
        ? bearerChallenge(only(['invalid_token']))
        : undefined;
  return {
    description,
    ...(headers && { headers }),
    content: {
      'application/problem+json': {
        schema:
          codes.length === 0
            ? problemRef
            : { allOf: [problemRef, { properties: { code: { enum: codes } } }] },
      },
    },
  };
};

/** The codes every route of this kind can answer, then the route's own. */
function errorCodes(route: MountedRoute): ErrorCode[] {
  // Any request's body is read under a limit, a bodiless route's too (a GET may carry one).
  const codes: ErrorCode[] = ['payload_too_large'];
  if (route.body || route.raw) codes.push('validation_failed', 'invalid_json');
  if (route.body) codes.push('unsupported_media_type');
  if (route.auth === 'bearer') codes.push('invalid_token');
  if (!route.storeless) codes.push('unavailable');
  return [...new Set([...codes, ...(route.errors ?? [])])];
}

function responsesOf(route: MountedRoute): Json {
  const responses: Json = {};
  const declared = route.responses ?? { 200: { description: 'Success' } };
  for (const [status, r] of Object.entries(declared)) {
    if (Number(status) >= 400) continue;
    const content = r.binary
      ? { '*/*': { schema: { type: 'string', format: 'binary' } } }
      : r.schema
        ? { 'application/json': { schema: jsonSchema(r.schema, 'output') } }
        : undefined;
    const headers = route.refreshCookie ? { headers: refreshCookieHeader(route.refreshCookie) } : {};
    responses[status] = { description: r.description, ...headers, ...(content && { content }) };
  }
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorCodes(route)) {
    const status = errorStatus[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  for (const status of Object.keys(declared).map(Number)) {
    if (status >= 400 && !byStatus.has(status)) byStatus.set(status, []);
  }
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const named = codes.map((c) => `${errorTitle(c)} (\`${c}\`)`).join('; ');
    const own = declared[status]?.description;
    responses[status] = problem(
      own && named ? `${own}: ${named}` : own || named,
      status,
      codes,
      route.auth === 'bearer',
    );
  }
  responses.default = problem('Any other error (RFC 9457 problem with a stable `code`)', 500);
  return responses;
}

function operation(route: MountedRoute): Json {
  const params: Json[] = [...route.fullPath.matchAll(/:(\w+)/g)].map(([, name]) => {
    const declared = route.params?.shape[name!] as ZodType | undefined;
    return {
      name,
      in: 'path',
      required: true,
      schema: declared ? jsonSchema(declared, 'input') : { type: 'string', maxLength: 200 },
    };
  });
  for (const [name, schema] of Object.entries(route.query?.shape ?? {})) {
    const { description, ...rest } = jsonSchema(schema as ZodType, 'input');
    params.push({
      name,
      in: 'query',
      required: !(schema as ZodType).safeParse(undefined).success,
      ...(description === undefined ? {} : { description }),
      schema: rest,
    });
  }
  const responses = responsesOf(route);

  const op: Json = {
    operationId: route.operationId,
    summary: route.summary,
    tags: [route.area],
    responses,
  };
  if (params.length > 0) op.parameters = params;
  if (route.auth === 'bearer') op.security = [{ bearer: [] }];
  // The token in the body, or (browser sessions) the refresh cookie.
  else if (route.refreshCookie === 'rotates' || route.refreshCookie === 'ends')
    op.security = [{}, { refreshCookie: [] }];
  if (route.body) {
    op.requestBody = {
      // Routes whose body may be left out (a password only for re-authentication) say so.
      required: !route.body.safeParse(undefined).success,
      content: { 'application/json': { schema: jsonSchema(route.body, 'input') } },
    };
  } else if (route.raw) {
    // Signed webhooks: any JSON object, verified over its raw bytes before parsing.
    op.requestBody = { required: true, content: { 'application/json': { schema: { type: 'object' } } } };
  }
  return op;
}

/** The OpenAPI 3.1 document of a route table, generated from its zod schemas. */
export function openApiDocument(routes: readonly MountedRoute[]): Json {
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const path = route.fullPath.replace(/:(\w+)/g, '{$1}');
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Postern',
      version: pkg.version,
      description: 'Authentication and inbound-mail webhooks. Errors are RFC 9457 problems.',
    },
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        refreshCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: 'postern_refresh',
          description:
            "A browser session's refresh token (option `cookieSessions`; the name is configurable and takes the `__Secure-` prefix where every trusted origin is https). Accepted with a JSON body from a trusted `Origin` (or `Sec-Fetch-Site: same-origin`); else 403 `csrf_refused`.",
        },
      },
      schemas: { Problem: problemSchema },
    },
  };
}

/** `GET <auth>/openapi.json`: the document of every route of this instance (built once,
 *  on first request, so switched-off routes are absent from it), with the adapter's mount
 *  point as its server. */
export function openApiRoute(routes: () => readonly MountedRoute[]): RouteDef {
  let doc: Json | undefined;
  return {
    method: 'GET',
    path: '/openapi.json',
    operationId: 'openApiDocument',
    auth: 'none',
    summary: 'OpenAPI 3.1 document of every route',
    storeless: true,
    responses: {
      200: {
        description: 'The OpenAPI document',
        schema: z.looseObject({ openapi: z.string(), paths: z.looseObject({}) }),
      },
    },
    handler: ({ base }) => {
      doc ??= openApiDocument(routes());
      // Mounted under a sub-path, the document's paths are relative to it: a relative server
      // URL says so, for the client generators that read it.
      return { status: 200, body: base === '' ? doc : { ...doc, servers: [{ url: base }] } };
    },
  };
}
