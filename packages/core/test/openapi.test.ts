import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { createPostern } from '../src/postern.js';

async function fetchDoc(options: Partial<Parameters<typeof createPostern>[0]> = {}, path = '/auth') {
  const ph = createPostern({ issuer: 'https://postern.test', audience: 'test', ...options });
  const res = await ph.handle({ method: 'GET', path: `${path}/openapi.json`, headers: {} });
  await ph.close();
  if (!res || typeof res.body !== 'string') throw new Error('no OpenAPI answer');
  return { ph, res, doc: JSON.parse(res.body) as Record<string, any> };
}

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const { doc, res } = await fetchDoc();
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('lists every route of the table with its method, summary and security', async () => {
    const { ph, doc } = await fetchDoc();
    expect(ph.routes.length).toBeGreaterThan(0);
    for (const r of ph.routes) {
      const op = doc.paths[r.fullPath.replace(/:(\w+)/g, '{$1}')]?.[r.method.toLowerCase()];
      expect(op, `${r.method} ${r.fullPath}`).toBeDefined();
      expect(op.summary).toBe(r.summary);
      const cookie = r.refreshCookie === 'rotates' || r.refreshCookie === 'ends';
      expect(op.security).toEqual(
        r.auth === 'bearer' ? [{ bearer: [] }] : cookie ? [{}, { refreshCookie: [] }] : undefined,
      );
      // Whatever sets, rotates or clears the refresh cookie says so on its success.
      const ok = Object.entries(op.responses).find(([status]) => status.startsWith('2'))![1] as any;
      expect(ok.headers?.['Set-Cookie'] !== undefined, `${r.method} ${r.fullPath}`).toBe(!!r.refreshCookie);
      expect(op.responses.default.content['application/problem+json'].schema).toEqual({
        $ref: '#/components/schemas/Problem',
      });
    }
    const operations = Object.values(doc.paths).flatMap((p: any) => Object.keys(p));
    expect(operations).toHaveLength(ph.routes.length);
    // Every route that completes a login can set a browser session's cookie.
    expect(
      ph.routes
        .filter((r) => r.refreshCookie)
        .map((r) => `${r.fullPath} ${r.refreshCookie}`)
        .sort(),
    ).toEqual(
      [
        '/auth/login sets',
        '/auth/login/email-code sets',
        '/auth/logout ends',
        '/auth/mfa/recovery sets',
        '/auth/mfa/verify sets',
        '/auth/mfa/webauthn/verify sets',
        '/auth/refresh rotates',
      ].sort(),
    );
  });

  it('describes JSON bodies from the zod schemas, strict objects included', async () => {
    const { ph, doc } = await fetchDoc();
    for (const r of ph.routes.filter((x) => x.body)) {
      const op = doc.paths[r.fullPath.replace(/:(\w+)/g, '{$1}')][r.method.toLowerCase()];
      const schema = op.requestBody.content['application/json'].schema;
      expect(schema.$schema).toBeUndefined();
      expect(JSON.stringify(schema)).not.toBe('{}');
      expect(op.responses['415']).toBeDefined();
    }
    // A body the route does without (re-authentication by password only) is not required.
    const required = (path: string, method: string) => doc.paths[path][method].requestBody.required;
    expect(required('/auth/login', 'post')).toBe(true);
    expect(required('/auth/mfa/totp/setup', 'post')).toBe(false);
    expect(required('/auth/sessions', 'delete')).toBe(false);
  });

  it('names path parameters in OpenAPI form, before any query parameters', async () => {
    const { ph, doc } = await fetchDoc();
    for (const r of ph.routes.filter((x) => x.fullPath.includes(':'))) {
      const op = doc.paths[r.fullPath.replace(/:(\w+)/g, '{$1}')][r.method.toLowerCase()];
      const names = [...r.fullPath.matchAll(/:(\w+)/g)].map((m) => m[1]);
      expect(
        op.parameters.filter((p: { in: string }) => p.in === 'path').map((p: { name: string }) => p.name),
      ).toEqual(names);
    }
  });

  it('follows the configured mount points and leaves out switched-off routes', async () => {
    const { doc } = await fetchDoc(
      { basePath: { auth: '/identity' }, routes: { signup: false } },
      '/identity',
    );
    const paths = Object.keys(doc.paths);
    expect(paths).toContain('/identity/openapi.json');
    expect(paths.some((p) => p.startsWith('/auth/'))).toBe(false);
    expect(paths).not.toContain('/identity/signup');
  });
});

describe('route names', () => {
  /** Every route on: the default ones, and the enrolment of a login under `mfa.required`. */
  const everyRoute = () =>
    createPostern({ issuer: 'https://postern.test', audience: 'test', mfa: { required: true } });

  it('names each route after the library function it runs, once per instance', async () => {
    const ph = everyRoute();
    await ph.close();
    const ids = ph.routes.map((r) => r.operationId);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    for (const r of ph.routes) {
      const where = `${r.method} ${r.fullPath} (${r.operationId})`;
      expect(r.operationId, where).toMatch(/^[a-z][A-Za-z0-9]*$/);
      if (r.library === null) continue;
      const library = ph[r.library] as unknown as Record<string, unknown>;
      expect(typeof library[r.operationId], where).toBe('function');
    }
    // Only routes that no library function stands behind go without one.
    expect(
      ph.routes
        .filter((r) => r.library === null)
        .map((r) => r.operationId)
        .sort(),
    ).toEqual(['jwks', 'openApiDocument', 'receiveDeliveryEvent', 'receiveInboundEmail', 'receiveWebhook']);
  });

  it('gives the OpenAPI document the operationIds of the declarations', async () => {
    const ph = everyRoute();
    const res = await ph.handle({ method: 'GET', path: '/auth/openapi.json', headers: {} });
    await ph.close();
    const doc = JSON.parse(res!.body as string) as { paths: Record<string, Record<string, any>> };
    const served = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId}`),
    );
    const declared = ph.routes.map(
      (r) => `${r.method} ${r.fullPath.replace(/:(\w+)/g, '{$1}')} ${r.operationId}`,
    );
    expect(served.sort()).toEqual(declared.sort());
  });

  it('routes a parameter with declared values only for those values', async () => {
    const ph = everyRoute();
    const res = await ph.handle({ method: 'DELETE', path: '/auth/mfa/sms', headers: {} });
    const known = await ph.handle({ method: 'DELETE', path: '/auth/mfa/totp', headers: {} });
    await ph.close();
    expect(res!.status).toBe(404);
    expect(known!.status).toBe(401);
  });
});

describe('docs/openapi.json', () => {
  it('is the document the routes serve now (regenerate with `pnpm openapi`)', async () => {
    const { OPENAPI_FILE, openApiText } = await import('../../../scripts/openapi.js');
    const { readFile } = await import('node:fs/promises');
    expect(await readFile(OPENAPI_FILE, 'utf8')).toBe(await openApiText());
  });
});

describe('docs/routes.md', () => {
  it('is the table the route declarations give now (regenerate with `pnpm routes-doc`)', async () => {
    const { ROUTES_FILE, routesDocText } = await import('../../../scripts/routes-doc.js');
    const { readFile } = await import('node:fs/promises');
    expect(await readFile(ROUTES_FILE, 'utf8')).toBe(await routesDocText());
  });
});
