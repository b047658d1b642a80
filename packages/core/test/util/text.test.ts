import { describe, expect, it } from 'vitest';
import { isProviderId } from '../../src/inbox/provider-client.js';
import { parseWellFormedJson, wellFormed } from '../../src/util/text.js';

describe('well-formed text', () => {
  it('replaces lone surrogates and keeps pairs', () => {
    expect(wellFormed('a\ud800b\udc00c')).toBe('a\ufffdb\ufffdc');
    expect(wellFormed('ok \u{1F600}')).toBe('ok \u{1F600}');
    expect(wellFormed('\u{1F600}'.slice(0, 1))).toBe('\ufffd');
  });

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
