import { createPostern, type NeutralRequest } from '@postern/core';
import { memoryStores } from '@postern/core/memory';
import { TestClock } from '@postern/testkit';
import { describe, expect, it } from 'vitest';
import { isPosternError } from '../../src/errors.js';
import { parseUtf8Json } from '../../src/http/body.js';
import { nestsDeeperThan } from '../../src/http/json-depth.js';

const bytes = (s: string) => Buffer.from(s);
const nested = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;

describe('JSON nesting depth', () => {
  it('every JSON body is bounded before it is parsed, not only signed webhooks', async () => {
    const clock = new TestClock(Date.UTC(2030, 0, 1));
    const ph = createPostern({
      issuer: 'https://postern.test',
      audience: 'postern-test',
      clock,
      mailer: { send: async () => {} },
      stores: memoryStores({ clock }),
    });
    const post = (body: string) =>
      ph.handle({
        method: 'POST',
        path: '/auth/login',
        headers: { 'content-type': 'application/json' },
        body: Buffer.from(body),
        ip: '192.0.2.1',
      } satisfies NeutralRequest);
    const res = await post(`{"email":"a@example.com","password":${nested(20_000)}}`);
    expect(res?.status).toBe(400);
    const problem = JSON.parse(Buffer.from(res!.body as Uint8Array).toString());
    expect(problem).toMatchObject({
      code: 'validation_failed',
      errors: [{ path: '/', message: 'Objects and arrays nested deeper than 100 levels' }],
    });
  });

  it('parseUtf8Json refuses a body nested deeper than 100 levels and parses one of 100', () => {
    const err = (() => {
      try {
        parseUtf8Json(bytes(`{"d":${nested(100)}}`));
      } catch (e) {
        return e;
      }
    })();
    expect(isPosternError(err) && err.code).toBe('validation_failed');
    expect(parseUtf8Json(bytes(`{"d":${nested(99)}}`)).value).toEqual({ d: JSON.parse(nested(99)) });
  });

  it('skips string contents, escaped quotes and runs of backslashes included', () => {
    expect(nestsDeeperThan(bytes(`["${'['.repeat(50)}"]`), 2)).toBe(false);
    expect(nestsDeeperThan(bytes(`["\\"[[[[", [[1]]]`), 3)).toBe(false);
    expect(nestsDeeperThan(bytes(`["\\"[[[[", [[[1]]]]`), 3)).toBe(true);
    // An even run of backslashes escapes itself: the quote after it closes the string.
    expect(nestsDeeperThan(bytes(`["a\\\\", [[[1]]]]`), 3)).toBe(true);
    expect(nestsDeeperThan(bytes(`["a\\\\\\"[[[[", 1]`), 1)).toBe(false);
    // An unclosed string ends the scan (the parser refuses the text).
    expect(nestsDeeperThan(bytes(`["[[[[`), 1)).toBe(false);
    expect(nestsDeeperThan(bytes(`[[[`), 2)).toBe(true);
  });
});
