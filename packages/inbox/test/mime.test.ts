import { describe, expect, it } from 'vitest';
import { decodeWords, parseMime } from '../src/index.js';

const bytes = (lines: string[]) => new TextEncoder().encode(lines.join('\r\n'));

describe('parseMime', () => {
  it('gives the mail as plain data: addresses, groups, ids, bodies and attachment bytes', async () => {
    const mail = await parseMime(
      bytes([
        'From: =?UTF-8?Q?Ann_M=C3=BCller?= <ann@customer.test>',
        'Reply-To: replies@customer.test',
        'To: Support <support@acme.test>, Team: bob@acme.test, carol@acme.test;',
        'Cc: dan@acme.test',
        'Subject: =?UTF-8?B?R3LDvMOfZQ==?=',
        'Message-ID: <m-2@customer.test>',
        'In-Reply-To: <m-1@acme.test>',
        'References: <m-0@acme.test> <m-1@acme.test>',
        'MIME-Version: 1.0',
        'Content-Type: multipart/mixed; boundary="b"',
        '',
        '--b',
        'Content-Type: text/html; charset=utf-8',
        '',
        '<p>Hello</p>',
        '--b',
        'Content-Type: application/pdf; name="a.pdf"',
        'Content-Disposition: attachment; filename="a.pdf"',
        'Content-Transfer-Encoding: base64',
        '',
        Buffer.from('%PDF-1.4 bytes').toString('base64'),
        '--b--',
        '',
      ]),
    );
    expect(mail).toMatchObject({
      from: [{ name: 'Ann Müller', address: 'ann@customer.test' }],
      replyTo: [{ name: '', address: 'replies@customer.test' }],
      to: [
        { name: 'Support', address: 'support@acme.test' },
        {
          name: 'Team',
          group: [
            { name: '', address: 'bob@acme.test' },
            { name: '', address: 'carol@acme.test' },
          ],
        },
      ],
      cc: [{ name: '', address: 'dan@acme.test' }],
      subject: 'Grüße',
      messageId: '<m-2@customer.test>',
      inReplyTo: '<m-1@acme.test>',
      references: ['<m-0@acme.test>', '<m-1@acme.test>'],
      html: '<p>Hello</p>',
      // Not derived from the HTML here: that is htmlToText's bounded work.
      text: null,
    });
    expect(mail.attachments).toHaveLength(1);
    expect(mail.attachments[0]).toMatchObject({
      filename: 'a.pdf',
      contentType: 'application/pdf',
      contentDisposition: 'attachment',
      related: false,
    });
    expect(new TextDecoder().decode(mail.attachments[0]!.content)).toBe('%PDF-1.4 bytes');
  });

  it('a single References id is a list of one; absent headers are null or empty', async () => {
    const mail = await parseMime(
      bytes(['References: <only@x.test>', 'Content-Type: text/plain', '', 'just text']),
    );
    expect(mail).toMatchObject({
      from: [],
      to: [],
      subject: null,
      messageId: null,
      inReplyTo: null,
      references: ['<only@x.test>'],
      html: null,
      text: 'just text',
      attachments: [],
    });
  });
});

describe('decodeWords', () => {
  it('decodes RFC 2047 words, B and Q, in any charset libmime knows', () => {
    expect(decodeWords('=?UTF-8?B?SGVsbG8=?= =?ISO-8859-1?Q?w=F6rld?=')).toBe('Hellowörld');
    expect(decodeWords('plain subject')).toBe('plain subject');
  });
});
