import { ConfigError, createPostern, type PosternOptions } from '@postern/core';
import { describe, expect, it } from 'vitest';

const base = { issuer: 'https://postern.test', audience: 'test' };
const create = (extra: Record<string, unknown>) => createPostern({ ...base, ...extra } as PosternOptions);
const refusal = (extra: Record<string, unknown>): string => {
  try {
    create(extra);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(extra)}`);
};

describe('option groups are checked at start-up', () => {
  it('refuses a body limit that is not a whole number of bytes', () => {
    expect(refusal({ bodyLimits: { auth: '100kb' } })).toBe(
      'bodyLimits.auth (bytes) must be an integer >= 1',
    );
    expect(refusal({ bodyLimits: { webhook: 1.5 } })).toBe(
      'bodyLimits.webhook (bytes) must be an integer >= 1',
    );
    expect(refusal({ bodyLimits: { webhook: 0 } })).toMatch(/^bodyLimits\.webhook/);
    expect(refusal({ bodyLimits: { auth: Number.NaN } })).toMatch(/^bodyLimits\.auth/);
    expect(refusal({ bodyLimits: { auth: 1024, inbox: 1024 } })).toBe(
      'createPostern: unknown option(s) bodyLimits.inbox',
    );
  });

  it('refuses a mount point that is not a plain path', () => {
    const message =
      'basePath.auth must be a path such as /auth: "/" and segments of letters, digits, "-", ".", "_" or "~", no trailing "/"';
    for (const auth of ['auth', '', '/auth/', '/a//b', '/a/../b', '/a/.', '/:id', '/a b', '/a?x=1', 42, null])
      expect(refusal({ basePath: { auth } }), String(auth)).toBe(message);
    expect(refusal({ basePath: { webhook: '/hooks/*' } })).toMatch(/^basePath\.webhook must be a path/);
    expect(refusal({ basePath: { auth: '/a', api: '/b' } })).toBe(
      'createPostern: unknown option(s) basePath.api',
    );
  });

  it('refuses a route switch that is not a boolean', () => {
    expect(refusal({ routes: { signup: 'no' } })).toBe('routes.signup must be true or false');
  });

  it('refuses a group that is not an object', () => {
    expect(refusal({ basePath: '/api' })).toBe('createPostern: basePath must be an object');
    expect(refusal({ bodyLimits: 1024 })).toBe('createPostern: bodyLimits must be an object');
    expect(refusal({ mfa: ['totp'] })).toBe('createPostern: mfa must be an object');
    expect(refusal({ throttle: 'strict' })).toBe('createPostern: throttle must be an object');
  });

  it('accepts valid mount points and limits, and serves under them', async () => {
    const ph = create({
      basePath: { auth: '/api/v1.0/auth', inbox: '/', webhook: '/hooks_in/mail-~x' },
      bodyLimits: { auth: 10, webhook: 20 },
      routes: { signup: true, emailChange: undefined },
    });
    expect(ph.prefixes).toEqual(['/api/v1.0/auth', '/', '/hooks_in/mail-~x']);
    const res = await ph.handle({
      method: 'POST',
      path: '/api/v1.0/auth/login',
      headers: { 'content-type': 'application/json' },
      body: new TextEncoder().encode(JSON.stringify({ email: 'someone@example.com', password: 'x' })),
    });
    expect(res?.status).toBe(413);
    await ph.close();
  });
});
