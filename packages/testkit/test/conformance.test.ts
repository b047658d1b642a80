import { createPostern } from '@postern/core';
import { afterAll, describe, expect, it } from 'vitest';
import { openApiConformance } from '../src/http/conformance.js';

const ph = createPostern({ issuer: 'https://postern.test', audience: 'test' });
afterAll(() => ph.close());
const check = openApiConformance(ph);
const json = (status: number, body: unknown, type = 'application/json') =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': type } });
const problem = (status: number, code: string) =>
  json(status, { type: 'about:blank', title: 'x', status, code }, 'application/problem+json');

describe('openApiConformance', () => {
  it('passes answers the document describes', async () => {
    expect(await check('GET', 'http://h/auth/roles', json(200, { roles: ['admin'] }))).toBeNull();
    expect(await check('POST', 'http://h/auth/login', problem(401, 'invalid_credentials'))).toBeNull();
    expect(await check('GET', 'http://h/inbox/threads/abc', problem(403, 'forbidden'))).toBeNull();
  });

  it('leaves paths and methods outside the document alone', async () => {
    expect(await check('GET', 'http://h/elsewhere', json(418, {}))).toBeNull();
    expect(await check('PUT', 'http://h/auth/login', json(404, {}))).toBeNull();
  });

  it('reports a status the operation does not list', async () => {
    expect(await check('GET', 'http://h/auth/roles', problem(409, 'email_taken'))).toMatch(
      /GET \/auth\/roles -> 409: status not in the OpenAPI document/,
    );
  });

  it('reports a 500, a code the status does not list, and a body of another type', async () => {
    expect(await check('GET', 'http://h/auth/roles', problem(500, 'internal'))).toMatch(/status not in/);
    expect(await check('GET', 'http://h/auth/roles', problem(401, 'invalid_credentials'))).toMatch(
      /must be equal to one of the allowed values/,
    );
    const text = new Response('hello', { status: 200, headers: { 'content-type': 'text/plain' } });
    expect(await check('GET', 'http://h/auth/roles', text)).toMatch(/text\/plain, but the document lists/);
  });

  it('reports a body that does not match its schema', async () => {
    expect(await check('GET', 'http://h/auth/roles', json(200, { roles: 'admin' }))).toMatch(
      /body does not match/,
    );
    expect(await check('GET', 'http://h/auth/roles', json(200, { roles: [], extra: 1 }))).toMatch(
      /additional properties/,
    );
    expect(
      await check('POST', 'http://h/auth/login', json(401, { code: 'x' }, 'application/problem+json')),
    ).toMatch(/required property/);
    // validation_failed always lists errors[].
    expect(await check('POST', 'http://h/auth/login', problem(400, 'validation_failed'))).toMatch(
      /required property 'errors'/,
    );
    const listed = { type: 'about:blank', title: 'x', status: 400, code: 'validation_failed' };
    const withErrors = json(
      400,
      { ...listed, errors: [{ path: '/', message: 'm' }] },
      'application/problem+json',
    );
    expect(await check('POST', 'http://h/auth/login', withErrors)).toBeNull();
  });

  it('reports a problem body whose status differs from the answer', async () => {
    const res = json(
      401,
      { type: 'about:blank', title: 'x', status: 400, code: 'invalid_credentials' },
      'application/problem+json',
    );
    expect(await check('POST', 'http://h/auth/login', res)).toMatch(/problem body says status 400/);
  });

  it('reports a required header that is missing and a listed header that does not match', async () => {
    const with_ = (res: Response, name: string, value: string) => {
      res.headers.set(name, value);
      return res;
    };
    // A refused token on a Bearer route always carries the challenge (RFC 6750 3.1).
    expect(await check('GET', 'http://h/auth/me', problem(401, 'invalid_token'))).toMatch(
      /no WWW-Authenticate header, which the document requires/,
    );
    const challenged = with_(problem(401, 'invalid_token'), 'www-authenticate', 'Bearer');
    expect(await check('GET', 'http://h/auth/me', challenged)).toBeNull();
    const other = with_(problem(401, 'invalid_token'), 'www-authenticate', 'Basic realm="x"');
    expect(await check('GET', 'http://h/auth/me', other)).toMatch(
      /WWW-Authenticate: "Basic realm=\\"x\\"" does not match/,
    );
    // Every 429 says how long to wait, in whole seconds.
    expect(await check('POST', 'http://h/auth/login', problem(429, 'rate_limited'))).toMatch(
      /no Retry-After header/,
    );
    const waited = with_(problem(429, 'rate_limited'), 'retry-after', '30');
    expect(await check('POST', 'http://h/auth/login', waited)).toBeNull();
    const dated = with_(problem(429, 'rate_limited'), 'retry-after', 'Wed, 21 Oct 2026 07:28:00 GMT');
    expect(await check('POST', 'http://h/auth/login', dated)).toMatch(/Retry-After: .* does not match/);
    // A webhook secret that is not configured is no wait: its 503 may go without one.
    expect(await check('POST', 'http://h/inbox/webhook', problem(503, 'webhook_not_configured'))).toBeNull();
  });
});
