import { describe, expect, it } from 'vitest';
import { isProviderId } from '../../src/inbox/provider-client.js';
import { parseWellFormedJson } from '../../src/util/text.js';

describe('well-formed text', () => {
  it('parses JSON with lone-surrogate escapes into well-formed string values (keys are only looked up by name)', () => {
    expect(parseWellFormedJson('{"a\\ud800":["x\\udc00",{"y":"\\ud83d\\ude00"}],"n":1}')).toEqual({
      'a\ud800': ['x\ufffd', { y: '\u{1F600}' }],
      n: 1,
    });
    expect(() => parseWellFormedJson('{')).toThrow(SyntaxError);
  });

  it('refuses a provider id without a URL form', () => {
    expect(isProviderId('abc\ud800')).toBe(false);
    expect(isProviderId('abc\u{1F600}')).toBe(true);
  });
});
