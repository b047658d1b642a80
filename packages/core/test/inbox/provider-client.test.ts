import { createServer } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import { ConfigError, ProviderError, resendProvider } from '@postern/core';
import { FakeMailProvider, listen, recordingLogger } from '@postern/testkit';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

let fake: FakeMailProvider;
beforeAll(async () => {
  fake = await FakeMailProvider.start();
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.clearFaults();
  fake.emails.clear();
  fake.requests.length = 0;
});

const client = (extra: { timeoutMs?: number; maxAttachmentBytes?: number; maxResponseBytes?: number } = {}) =>
  resendProvider({ ...fake.config(), ...extra });

describe('provider client', () => {
  it('fetches a received email with its headers and attachment list, with the Bearer token', async () => {
    fake.emails.set('e1', {
      from: 'Ann <ann@x.test>',
      to: ['support@acme.test'],
      subject: 'Hi',
      html: '<p>Hi</p>',
      text: null,
      headers: { 'In-Reply-To': '<a@b>', References: ['<a@b>', '<c@d>'] },
      message_id: '<m1@x.test>',
      attachments: [{ id: 'a1', filename: 'f.txt', contentType: 'text/plain', bytes: Buffer.from('hello') }],
    });
    const got = await client().getReceivedEmail('e1');
    expect(got).toMatchObject({
      from: 'Ann <ann@x.test>',
      subject: 'Hi',
      html: '<p>Hi</p>',
      text: null,
      messageId: '<m1@x.test>',
      attachments: [{ id: 'a1', filename: 'f.txt', contentType: 'text/plain', size: 5 }],
    });
    expect(got!.headers.get('references')).toEqual(['<a@b>', '<c@d>']);
    expect(fake.requests[0]!.authorization).toBe(`Bearer ${fake.token}`);
  });

  it('answers null for a 404 so the consumer can finish with provider_not_found', async () => {
    expect(await client().getReceivedEmail('unknown')).toBeNull();
  });

  it('throws a retryable ProviderError on 5xx', async () => {
    fake.fail(/receiving/, { status: 503 });
    await expect(client().getReceivedEmail('e1')).rejects.toBeInstanceOf(ProviderError);
  });

  it('throws when the provider is slower than the timeout', async () => {
    fake.emails.set('slow', { subject: 'x' });
    fake.fail(/slow/, { delayMs: 500 });
    await expect(client({ timeoutMs: 100 }).getReceivedEmail('slow')).rejects.toThrow('provider timed out');
  });

  it('ends a call at once when its signal aborts (the outbox stopping), as a retryable error', async () => {
    fake.emails.set('stalled', { subject: 'x' });
    fake.fail(/stalled/, { delayMs: 5000 });
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 50);
    const t0 = Date.now();
    const err = await client({ timeoutMs: 10_000 })
      .getReceivedEmail('stalled', { signal: stop.signal })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ message: 'provider call cancelled', permanent: false });
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('throws when nothing listens at the API URL', async () => {
    const dead = await listen(createServer());
    const url = dead.url;
    await dead.close();
    const c = resendProvider({ apiUrl: url, token: 't' });
    await expect(c.getReceivedEmail('e1')).rejects.toThrow('provider unreachable');
  });

  it('percent-encodes ids and refuses over-long ones', async () => {
    await client().getReceivedEmail('../../emails?x=1#y');
    expect(fake.requests.at(-1)!.path).toBe('/emails/receiving/..%2F..%2Femails%3Fx%3D1%23y');
    await expect(client().getReceivedEmail('x'.repeat(300))).rejects.toThrow('invalid provider id');
    // Dot segments survive percent-encoding and would be resolved as path steps.
    const asked = fake.requests.length;
    for (const id of ['.', '..']) {
      await expect(client().getReceivedEmail(id)).rejects.toThrow('invalid provider id');
      await expect(client().getReceivedAttachment('e1', id)).rejects.toThrow('invalid provider id');
    }
    expect(fake.requests.length).toBe(asked);
  });

  it('downloads attachments through the download_url of the same origin', async () => {
    fake.emails.set('e2', {
      attachments: [
        { id: 'a/1', filename: 'x.bin', contentType: 'application/pdf', bytes: Buffer.from([1, 2, 3]) },
      ],
    });
    const file = await client().getReceivedAttachment('e2', 'a/1');
    expect(file).toEqual({ bytes: new Uint8Array([1, 2, 3]), contentType: 'application/pdf' });
    expect(fake.requests.map((r) => r.path)).toEqual([
      '/emails/receiving/e2/attachments/a%2F1',
      expect.stringMatching(/^\/downloads\//),
    ]);
  });

  it('refuses a download_url that is neither https nor the API origin', async () => {
    fake.emails.set('e3', {
      attachments: [
        {
          id: 'a1',
          filename: 'x',
          contentType: 'text/plain',
          bytes: Buffer.from('x'),
          downloadUrl: 'http://169.254.169.254/latest/meta-data',
        },
      ],
    });
    await expect(client().getReceivedAttachment('e3', 'a1')).rejects.toThrow('download_url refused');
  });

  it('refuses https download_urls at loopback, private, link-local or mapped addresses, never connecting', async () => {
    // A TCP listener on loopback counts every connection a download would open.
    let connections = 0;
    const tcp = createTcpServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
    const { port } = tcp.address() as { port: number };
    try {
      const urls = [
        `https://127.0.0.1:${port}/file`,
        `https://127.1:${port}/file`,
        `https://localhost:${port}/file`,
        `https://[::ffff:127.0.0.1]:${port}/file`,
        `https://[::ffff:7f00:1]:${port}/file`,
        `https://[::1]:${port}/file`,
        'https://169.254.169.254/latest/meta-data',
        'https://10.0.0.7/file',
        'https://192.168.1.1/file',
        'https://[fd00::1]/file',
        'https://[fe80::1]/file',
      ];
      for (const [i, downloadUrl] of urls.entries()) {
        fake.emails.set(`p${i}`, {
          attachments: [
            { id: 'a1', filename: 'x', contentType: 'text/plain', bytes: Buffer.from('x'), downloadUrl },
          ],
        });
        const err = await client()
          .getReceivedAttachment(`p${i}`, 'a1')
          .catch((e: unknown) => e);
        expect({ downloadUrl, err }).toMatchObject({
          downloadUrl,
          err: { message: 'download_url refused: not a public address', permanent: true },
        });
      }
      expect(connections).toBe(0);
    } finally {
      await new Promise((resolve) => tcp.close(resolve));
    }
  });

  it('refuses an http API URL unless its host is loopback: the Bearer token would cross the network in clear', () => {
    for (const apiUrl of ['http://api.example.com', 'http://10.0.0.5:8080', 'http://[2001:4860::1]/']) {
      expect(() => resendProvider({ apiUrl, token: 't' })).toThrow(ConfigError);
    }
    for (const apiUrl of [
      'https://api.example.com',
      'http://127.0.0.1:4000',
      'http://localhost:4000',
      'http://[::1]:4000',
    ]) {
      expect(() => resendProvider({ apiUrl, token: 't' })).not.toThrow();
    }
  });

  it('refuses attachments over the size cap', async () => {
    fake.emails.set('e4', {
      attachments: [{ id: 'big', filename: 'b', contentType: 'text/plain', bytes: Buffer.alloc(2048) }],
    });
    await expect(client({ maxAttachmentBytes: 1024 }).getReceivedAttachment('e4', 'big')).rejects.toThrow(
      'too large',
    );
  });

  it('does not follow redirects', async () => {
    const redirector = await listen((_req, res) => {
      res.writeHead(302, { location: `${fake.url}/emails/receiving/e1` });
      res.end();
    });
    try {
      const c = resendProvider({ apiUrl: redirector.url, token: 't' });
      await expect(c.getReceivedEmail('e1')).rejects.toThrow('provider redirected');
      expect(fake.requests).toHaveLength(0);
    } finally {
      await redirector.close();
    }
  });

  it('sends with the headers it is given and an idempotency key, and returns the provider id', async () => {
    const { id } = await client().send({
      from: '"Acme" <support@acme.test>',
      to: ['ann@x.test'],
      subject: 'Re: Hi',
      text: 'Hello',
      headers: { 'Message-ID': '<m2@acme.test>', 'In-Reply-To': '<m1@x.test>' },
    });
    const sent = fake.sent.at(-1)!;
    expect(sent.id).toBe(id);
    expect(sent.body).toMatchObject({ to: ['ann@x.test'], headers: { 'Message-ID': '<m2@acme.test>' } });
    expect(sent.idempotencyKey).toBe('<m2@acme.test>');
  });

  it('refuses configuration without a URL', () => {
    expect(() => resendProvider({ apiUrl: 'not a url', token: 't' })).toThrow('provider.apiUrl');
  });

  it.each([
    ['timeoutMs', 0],
    ['timeoutMs', 1.5],
    ['maxResponseBytes', -1],
    ['maxAttachmentBytes', Number.NaN],
    // Past a timer's range Node fires at once: every call would time out.
    ['timeoutMs', 2 ** 31],
  ])('refuses %s of %s: a ConfigError naming it, not a client that never waits or reads', (name, value) => {
    expect(() => resendProvider({ apiUrl: 'https://api.example.test', token: 't', [name]: value })).toThrow(
      new RegExp(`provider\\.${name} must be an integer`),
    );
  });
});

describe('provider option', () => {
  it('warns once at start-up when an API URL comes without its token (no provider then)', async () => {
    const { createPostern } = await import('@postern/core');
    const { logger, warnings } = recordingLogger();
    const base = { issuer: 'https://postern.test', audience: 'test', logger };
    const without = () => warnings().filter((w) => w.reason === 'provider_without_token');
    createPostern({ ...base, provider: { apiUrl: 'https://api.provider.test' } });
    expect(without()).toHaveLength(1);
    createPostern({ ...base, provider: { ...fake.config() } });
    createPostern(base);
    expect(without()).toHaveLength(1);
  });
});
