import { describe, expect, it } from 'vitest';
import { canonicalEmail as canonicalAddress } from '../../src/auth/email.js';
import { headerSafe, parseAddresses, stripTag } from '../../src/inbox/addresses.js';
import {
  bareId,
  isSendableId,
  parseIdList,
  referencesValue,
  threadKeys,
} from '../../src/inbox/message-ids.js';
import { normalizeSubject } from '../../src/inbox/subject.js';

describe('subject normalization', () => {
  it.each([
    ['Re: Hello', 'hello'],
    ['RE:RE: Hello', 'hello'],
    ['Re:Re:Re:  Hello   world', 'hello world'],
    ['Fwd: Re: Hello', 'hello'],
    ['FW: hello', 'hello'],
    ['AW: WG: Hallo', 'hallo'],
    ['SV: Hej', 'hej'],
    ['VS: Hei', 'hei'],
    ['Antw: Hoi', 'hoi'],
    ['R: Ciao', 'ciao'],
    ['Ответ: Привет', 'привет'],
    ['ΑΠ: Γεια', 'γεια'],
    ['YANIT: Merhaba', 'merhaba'],
    ['回复：你好', '你好'],
    ['答复: 转发: 你好', '你好'],
    ['회신: 안녕', '안녕'],
    ['답장: 안녕', '안녕'],
    ['I: R: Ciao', 'ciao'],
    ['Rép : Bonjour', 'bonjour'],
    ['VB: SV: Hej', 'hej'],
    ['FS: bike, barely used', 'fs: bike, barely used'],
    ['I think: maybe', 'i think: maybe'],
    ['Rapport: weekly', 'rapport: weekly'],
    ['RE[2]: Hello', 'hello'],
    ['Re (3): Hello', 'hello'],
    ['Re : Hello', 'hello'],
    ['[list] Re: Topic', '[list] topic'],
    ['Re: [list] Topic', '[list] topic'],
    ['Ｒｅ： Full width', 'full width'],
    ['  Hello\t\nthere ', 'hello there'],
    ['Re:', ''],
    ['Regarding the plan', 'regarding the plan'],
    ['Return: of the king', 'return: of the king'],
    ['\u05ea\u05e9\u05d5\u05d1\u05d4: \u05e9\u05dc\u05d5\u05dd', '\u05e9\u05dc\u05d5\u05dd'],
    ['\u0631\u062f: \u0645\u0631\u062d\u0628\u0627', '\u0645\u0631\u062d\u0628\u0627'],
    ['Re:\u200b Hello', 'hello'],
    ['Hel\u2060lo', 'hello'],
  ])('normalizes %j to %j', (input, expected) => {
    expect(normalizeSubject(input)).toBe(expected);
  });

  it('treats the same text with different prefixes and case as one subject', () => {
    expect(normalizeSubject('Re: Invoice 42')).toBe(normalizeSubject('FWD:invoice 42'));
    // Lower-casing can undo NFKC: both spellings are one subject.
    expect(normalizeSubject('Re: J\u030c x')).toBe(normalizeSubject('\u01f0 x'));
  });
});

describe('message ids', () => {
  it('strips angle brackets and keeps each id once', () => {
    expect(parseIdList('<a@x> <b@y>\r\n <a@x>')).toEqual(['a@x', 'b@y']);
    expect(parseIdList(['<a@x>', 'c@z'])).toEqual(['a@x', 'c@z']);
    expect(parseIdList('bare-id@host other@host')).toEqual(['bare-id@host', 'other@host']);
    expect(parseIdList('<a@x> 56761188-7520-42d8 (a comment) <b@y>')).toEqual([
      'a@x',
      'b@y',
      '56761188-7520-42d8',
    ]);
  });

  it('keeps the first id and the 49 newest of a long list: the root and the parent', () => {
    const refs = Array.from({ length: 120 }, (_, i) => `<m${i}@x.test>`);
    const ids = parseIdList(refs.join(' '));
    expect(ids).toHaveLength(50);
    expect(ids[0]).toBe('m0@x.test');
    expect(ids.slice(1)).toEqual(refs.slice(71).map((r) => r.slice(1, -1)));
    // A value too long to read whole is read at both ends.
    const huge = parseIdList(`<root@x.test> ${'<filler@x.test> '.repeat(10_000)}<parent@x.test>`);
    expect(huge).toEqual(['root@x.test', 'filler@x.test', 'parent@x.test']);
    const packed = Array.from({ length: 1000 }, (_, i) => `<msg${i}.abcdefghij@example.com>`);
    const cut = parseIdList(packed.join(''));
    expect(cut[0]).toBe('msg0.abcdefghij@example.com');
    expect(cut.at(-1)).toBe('msg999.abcdefghij@example.com');
    expect(cut.every((id) => /^msg\d+\.abcdefghij@example\.com$/.test(id))).toBe(true);
    const many = parseIdList(Array.from({ length: 5000 }, (_, i) => `<p${i}@x.test>`));
    expect([many[0], many.at(-1)]).toEqual(['p0@x.test', 'p4999@x.test']);
  });

  it('takes no words, dates or comments beside bracketed ids for ids', () => {
    expect(parseIdList(`Your message of "Mon, 1 Jan 2024 10:00:00 +0000" <q-0@customer.test>`)).toEqual([
      'q-0@customer.test',
    ]);
    expect(parseIdList('<abc@host> (Jane Doe\'s message of "Mon, 1 Jan 2024 10:00:00 +0000 (UTC)")')).toEqual(
      ['abc@host'],
    );
    expect(parseIdList('<q-0@customer.test> (sent (via) web) <q-1@customer.test>')).toEqual([
      'q-0@customer.test',
      'q-1@customer.test',
    ]);
    expect(parseIdList('<a(1)@x.com> <b@y.com>')).toEqual(['a(1)@x.com', 'b@y.com']);
    expect(parseIdList(`${'word '.repeat(60)}<real@host>`)).toEqual(['real@host']);
  });

  it('refuses ids with white space or nothing in them', () => {
    expect(bareId('<>')).toBeNull();
    expect(bareId('  ')).toBeNull();
    expect(bareId('<abc@x>')).toBe('abc@x');
  });

  it('keys ids whole and by local part, short ones too, case-insensitively', () => {
    expect(threadKeys(['<ABCDEF12-3456@Mail.Example>', 'p1@x', '@x'])).toEqual([
      'abcdef12-3456@mail.example',
      'abcdef12-3456',
      'p1@x',
      'p1',
      '@x',
    ]);
    // A provider's short id meets the Message-ID that carries it.
    expect(threadKeys(['<P1@resend.dev>']).some((k) => threadKeys(['p1']).includes(k))).toBe(true);
    const provider = threadKeys(['56761188-7520-42d8-8898-ff6fc54ce618']);
    const header = threadKeys(['<56761188-7520-42d8-8898-FF6FC54CE618@email.amazonses.com>']);
    expect(header.some((k) => provider.includes(k))).toBe(true);
  });

  it('caps how many ids one header yields', () => {
    const many = Array.from({ length: 500 }, (_, i) => `<id${i}@x>`).join(' ');
    expect(parseIdList(many)).toHaveLength(50);
  });

  it('sends on only ids a header carries as they are, <id> within one line', () => {
    expect(isSendableId('a.b+c@x.test')).toBe(true);
    for (const id of ['\u00fc@x', 'a"b@x', 'a\\b@x', 'a(b)@x', 'a b@x', 'odd\u202e@x', null]) {
      expect(isSendableId(id)).toBe(false);
    }
    // `In-Reply-To: <id>` within a 998-character line.
    expect(isSendableId(`${'a'.repeat(981)}@x`)).toBe(true);
    expect(isSendableId(`${'a'.repeat(982)}@x`)).toBe(false);
  });

  it('References: whole ids, the root and the newest that fit in 20 ids and one header line', () => {
    expect(referencesValue([])).toBe('');
    expect(referencesValue(['a@x', 'b"@x', 'b@x', 'a@x'])).toBe('<a@x> <b@x>');
    const ids = Array.from({ length: 30 }, (_, i) => `id${i}@x`);
    const twenty = referencesValue(ids).split(' ');
    expect(twenty).toHaveLength(20);
    expect(twenty[0]).toBe('<id0@x>');
    expect(twenty.at(-1)).toBe('<id29@x>');
    expect(twenty[1]).toBe('<id11@x>');
    // Long ids: never one cut in two, the value within one header line.
    const long = Array.from({ length: 5 }, (_, i) => `${String(i).repeat(300)}@x`);
    const value = referencesValue(long);
    expect(`References: ${value}`.length).toBeLessThanOrEqual(998);
    expect(value.split(' ').map((v) => v.slice(1, -1))).toEqual([long[0], long[3], long[4]]);
    // A root and a parent too long together: the parent alone, it names what is answered.
    const huge = [`${'r'.repeat(900)}@x`, `${'p'.repeat(900)}@x`];
    expect(referencesValue(huge)).toBe(`<${huge[1]}>`);
  });
});

describe('addresses', () => {
  it('canonicalizes and strips +tags', () => {
    expect(canonicalAddress('  Support@ACME.test ')).toBe('support@acme.test');
    expect(stripTag('support+billing@acme.test')).toBe('support@acme.test');
    expect(stripTag('+x@acme.test')).toBe('+x@acme.test');
    expect(stripTag('plain@acme.test')).toBe('plain@acme.test');
  });

  it('parses strings, arrays and objects into display strings and canonical addresses', () => {
    expect(parseAddresses('"Replies" <Replies@Example.com>, b@x.test')).toEqual([
      { display: 'Replies <Replies@Example.com>', address: 'replies@example.com' },
      { display: 'b@x.test', address: 'b@x.test' },
    ]);
    expect(parseAddresses([{ email: 'A@X.test', name: 'A' }, 42, null])).toEqual([
      { display: 'A <A@X.test>', address: 'a@x.test' },
    ]);
    expect(parseAddresses('<"">')).toEqual([{ display: '""', address: null }]);
    expect(parseAddresses({ __proto__: { email: 'evil@x' } })).toEqual([]);
  });

  it('follows a few levels of nesting, not 50,000 (no stack overflow on a hostile payload)', () => {
    expect(parseAddresses([{ group: [['a@x.test']] }])).toEqual([
      { display: 'a@x.test', address: 'a@x.test' },
    ]);
    const deep = JSON.parse(`${'['.repeat(50_000)}"b@x.test"${']'.repeat(50_000)}`);
    expect(parseAddresses(deep)).toEqual([]);
    expect(parseAddresses({ value: deep })).toEqual([]);
  });

  it('removes CR and LF so nothing can start a header', () => {
    expect(headerSafe('Hi\r\nBcc: victim@x')).toBe('Hi Bcc: victim@x');
    expect(headerSafe('a\u2028b')).toBe('a b');
  });

  it('removes C1 controls and direction overrides, which readers take as line breaks or reordering', () => {
    expect(headerSafe('a\u0085b\u009bc')).toBe('a b c');
    expect(headerSafe('Invoice\u202egpj.exe \u2066x\u2069')).toBe('Invoice gpj.exe  x');
    // Marks right-to-left text needs stay.
    expect(headerSafe('\u05e9\u05dc\u05d5\u05dd\u200f')).toBe('\u05e9\u05dc\u05d5\u05dd\u200f');
  });
});
