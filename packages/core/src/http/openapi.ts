import { type ZodType, z } from 'zod';
import pkg from '../../package.json' with { type: 'json' };
import type { RouteDef } from './types.js';

type Json = Record<string, unknown>;
export type MountedRoute = RouteDef & { fullPath: string };

const problemRef = { $ref: '#/components/schemas/Problem' };

/** RFC 9457 body of every error (CONTRACT.md section 3). */
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
};

function jsonSchema(schema: ZodType, io: 'input' | 'output'): Json {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Json;
  return rest;
}

const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: problemRef } },
});

function operation(route: MountedRoute): Json {
  const params = [...route.fullPath.matchAll(/:(\w+)/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: { type: 'string', maxLength: 200 },
  }));
  const responses: Json = {};
  for (const [status, r] of Object.entries(route.responses ?? { 200: { description: 'Success' } })) {
    responses[status] = r.schema
      ? {
          description: r.description,
          content: { 'application/json': { schema: jsonSchema(r.schema, 'output') } },
        }
      : { description: r.description };
  }
  if (route.body || route.raw) {
    responses['400'] ??= problem('Invalid body (`validation_failed` or `invalid_json`)');
    responses['413'] ??= problem('Body over the limit (`payload_too_large`)');
  }
  if (route.body) responses['415'] ??= problem('Body is not JSON (`unsupported_media_type`)');
  if (route.auth === 'bearer')
    responses['401'] ??= problem('Missing or invalid access token (`invalid_token`)');
  responses.default = problem('Any other error (RFC 9457 problem with a stable `code`)');

  const op: Json = {
    operationId: `${route.method.toLowerCase()}${route.fullPath
      .split(/[^A-Za-z0-9]+/)
      .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
      .join('')}`,
    summary: route.summary,
    tags: [route.area],
    responses,
  };
  if (params.length > 0) op.parameters = params;
  if (route.auth === 'bearer') op.security = [{ bearer: [] }];
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
      title: 'Gatehouse',
      version: pkg.version,
      description: 'Authentication and inbound-mail webhooks. Errors are RFC 9457 problems.',
    },
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas: { Problem: problemSchema },
    },
  };
}

/** `GET <auth>/openapi.json`: the document of every route of this instance (built once,
 *  on first request, so switched-off routes are absent from it). */
export function openApiRoute(routes: () => readonly MountedRoute[]): RouteDef {
  let doc: Json | undefined;
  return {
    method: 'GET',
    path: '/openapi.json',
    area: 'auth',
    auth: 'none',
    summary: 'OpenAPI 3.1 document of every route',
    responses: { 200: { description: 'The OpenAPI document' } },
    handler: () => {
      doc ??= openApiDocument(routes());
      return { status: 200, body: doc };
    },
  };
}
