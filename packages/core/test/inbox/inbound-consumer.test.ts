import { readdirSync } from 'node:fs';
import { RetryLater } from '@postern/core';
import { FakeMailProvider, recordingLogger } from '@postern/testkit';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FIXTURES, fixture, received, resendFixture, setup } from './helpers.js';

const DAY = 86_400_000;

async function withAccount(t: ReturnType<typeof setup>, address = 'support@acme.test') {
  const owner = await t.user();
  const account = await t.ph.inbox.createAccount(owner.id, { address, name: 'Support' });
  return { owner, account };
}

/** Delivers an inbound event whose dispatcher stops 100 ms in: what it threw, and how long it
 *  took (a stop must not wait out the provider's timeout). */
async function deliverStopped(t: ReturnType<typeof setup>, payload: Record<string, unknown>, id: string) {
  const stop = new AbortController();
  const t0 = Date.now();
  setTimeout(() => stop.abort(), 100);
  const error = await t.deliver('inbound', payload, { id, signal: stop.signal }).catch((e: unknown) => e);
  return { error: String(error), ms: Date.now() - t0 };
}

async function threadsOf(t: ReturnType<typeof setup>, userId: string, accountId: string) {
  return (await t.ph.inbox.listThreads(userId, accountId)).threads;
}

describe('inbound consumer: accounts and de-duplication', () => {
  it('stores the Resend email.received fixture in a new thread and notifies the owner once', async () => {
    const t = setup();
    const { owner, account } = await withAccount(t, 'delivered@resend.dev');
    const payload = resendFixture('email.received');
    expect(await t.deliver('inbound', payload)).toEqual({ outcome: 'stored' });

    const [thread] = await threadsOf(t, owner.id, account.id);
    expect(thread).toMatchObject({ subject: 'Sending this example', messageCount: 1 });
    const detail = await t.ph.inbox.getThread(owner.id, thread!.id);
    expect(detail.messages).toHaveLength(1);
    expect(detail.messages[0]).toMatchObject({
      direction: 'inbound',
      from: 'onboarding@resend.dev',
      to: ['delivered@resend.dev'],
      providerMessageId: '56761188-7520-42d8-8898-ff6fc54ce618',
      messageId: '111-222-333@email.example.com',
      status: 'received',
      text: '',
      html: null,
    });
    expect(t.notifier.sent).toEqual([
      {
        key: `${detail.messages[0]!.id}:${owner.id}`,
        notice: expect.objectContaining({
          userId: owner.id,
          email: owner.email,
          subject: 'Sending this example',
        }),
      },
    ]);
  });

  it('never stores a message twice: same event again, or a new event with the same email_id', async () => {
    const t = setup();
    const { owner, account } = await withAccount(t);
    const payload = received({ email_id: 'dup-1' });
    expect(await t.deliver('inbound', payload, { id: 'evt-a' })).toEqual({ outcome: 'stored' });
    expect(await t.deliver('inbound', payload, { id: 'evt-a', attempt: 2 })).toEqual({
      outcome: 'duplicate',
    });
    expect(await t.deliver('inbound', payload, { id: 'evt-b' })).toEqual({ outcome: 'duplicate' });
    const threads = await threadsOf(t, owner.id, account.id);
    expect(threads).toHaveLength(1);
    expect(threads[0]!.messageCount).toBe(1);
    expect(t.notifier.sent).toHaveLength(1);
  });

  it('finishes with no_account when no recipient belongs to an account, and says so in the log', async () => {
    const { logger, lines } = recordingLogger();
    const t = setup({ logger });
    await withAccount(t);
    expect(await t.deliver('inbound', received({ to: ['nobody@acme.test'] }))).toEqual({
      outcome: 'no_account',
    });
    expect(t.notifier.sent).toHaveLength(0);
    const line = lines.find((l) => l.fields.event === 'inbox_mail_dropped');
    expect(line?.level).toBe('info');
    expect(line?.fields).toMatchObject({ outcome: 'no_account', outboxEventId: expect.any(String) });
  });

  it('matches to before cc, case-insensitively and without +tags; the first account wins', async () => {
    const t = setup();
    const a = await withAccount(t, 'sales@acme.test');
    const b = await withAccount(t, 'support@acme.test');
    await t.deliver('inbound', received({ to: ['Other <other@x.test>'], cc: ['SUPPORT+urgent@Acme.TEST'] }));
    expect(await threadsOf(t, b.owner.id, b.account.id)).toHaveLength(1);
    await t.deliver('inbound', received({ to: ['sales+eu@acme.test', 'support@acme.test'] }));
    expect(await threadsOf(t, a.owner.id, a.account.id)).toHaveLength(1);
    expect(await threadsOf(t, b.owner.id, b.account.id)).toHaveLength(1);
  });

  it('finishes with invalid_payload for a body that is not a JSON object', async () => {
    const t = setup();
    expect(await t.deliver('inbound', 'not json')).toEqual({ outcome: 'invalid_payload' });
    expect(await t.deliver('inbound', '[1,2]')).toEqual({ outcome: 'invalid_payload' });
  });
});

describe('inbound consumer: body sources', () => {
  let fake: FakeMailProvider;
  beforeAll(async () => {
    fake = await FakeMailProvider.start();
  });
  afterAll(() => fake.close());

  it('takes html, text and headers from the payload when no provider token is configured', async () => {
    const t = setup();
    const { owner, account } = await withAccount(t);
    await t.deliver(
      'inbound',
      received({
        html: '<p>Hello <b>there</b></p><script>x()</script>',
        headers: { 'Reply-To': 'r@x.test' },
      }),
    );
    const [thread] = await threadsOf(t, owner.id, account.id);
    const { messages } = await t.ph.inbox.getThread(owner.id, thread!.id);
    expect(messages[0]!.html).toBe('<p>Hello <b>there</b></p><script>x()</script>');
    expect(messages[0]!.text).toBe('Hello there');
  });

  it('decodes an encoded-word Subject header of a headers-only payload, so it threads with the decoded mail', async () => {
    const t = setup();
    const { owner, account } = await withAccount(t);
    await t.deliver('inbound', received({ from: 'ann@customer.test', subject: 'Grüße aus Köln', text: 'a' }));
    t.clock.advance(1000);
    await t.deliver(
      'inbound',
      received({
        from: 'ann@customer.test',
        subject: undefined,
        text: 'b',
        headers: { Subject: '=?UTF-8?Q?AW:_Gr=C3=BC=C3=9Fe_aus_K=C3=B6ln?=' },
      }),
    );
    const threads = await threadsOf(t, owner.id, account.id);
    expect(threads).toHaveLength(1);
    const { messages } = await t.ph.inbox.getThread(owner.id, threads[0]!.id);
    expect(messages.map((m) => m.subject)).toEqual(['Grüße aus Köln', 'AW: Grüße aus Köln']);
  });

  it('fetches body, headers and attachments from the provider when a token is configured', async () => {
    const t = setup({ provider: fake.config() });
    const { owner, account } = await withAccount(t);
    fake.emails.set('p-1', {
      html: '<p>From the <i>API</i></p>',
      text: null,
      headers: { 'message-id': '<api-1@x.test>' },
      message_id: '<api-1@x.test>',
      attachments: [
        { id: 'att-1', filename: 'notes.txt', contentType: 'text/plain', bytes: Buffer.from('note') },
        {
          id: 'att-2',
          filename: '../../etc/passwd',
          contentType: 'text/html',
          bytes: Buffer.from('<b>x</b>'),
        },
      ],
    });
    expect(await t.deliver('inbound', received({ email_id: 'p-1' }))).toEqual({ outcome: 'stored' });
    const [thread] = await threadsOf(t, owner.id, account.id);
    const { messages } = await t.ph.inbox.getThread(owner.id, thread!.id);
    expect(messages[0]).toMatchObject({ text: 'From the API', messageId: 'api-1@x.test' });
    expect(messages[0]!.attachments.map((a) => [a.filename, a.contentType, a.size])).toEqual([
      ['notes.txt', 'text/plain', 4],
      ['../../etc/passwd', 'text/html', 8],
    ]);
    const file = await t.ph.inbox.getAttachment(owner.id, messages[0]!.attachments[0]!.id);
    expect(Buffer.from(file.bytes).toString()).toBe('note');
  });

  it('finishes with provider_not_found when the provider does not know the email', async () => {
    const t = setup({ provider: fake.config() });
    await withAccount(t);
    expect(await t.deliver('inbound', received({ email_id: 'missing' }))).toEqual({
      outcome: 'provider_not_found',
    });
  });

  it("stores the payload's own fields when the provider can never give the mail (answer over the cap), without retrying", async () => {
    const { logger, lines } = recordingLogger();
    const t = setup({ provider: fake.config({ maxResponseBytes: 2000 }), logger });
    const { owner, account } = await withAccount(t);
    fake.emails.set('p-huge', { text: 'x'.repeat(5000), html: null });
    expect(
      await t.deliver('inbound', received({ email_id: 'p-huge', subject: 'Huge one' }), { id: 'e-huge' }),
    ).toEqual({ outcome: 'stored' });
    const [thread] = await threadsOf(t, owner.id, account.id);
    expect(thread).toMatchObject({ subject: 'Huge one' });
    expect(lines.find((l) => l.fields.event === 'inbox_provider_unfetchable')).toMatchObject({
      level: 'warn',
      fields: { outboxEventId: 'e-huge', err: 'provider answer too large' },
    });
    expect(t.notifier.sent).toHaveLength(1);
  });

  it('takes an email_id of . or .. as no id: no provider call, the payload body is stored', async () => {
    const t = setup({ provider: fake.config() });
    const { owner, account } = await withAccount(t);
    const asked = fake.requests.length;
    for (const id of ['.', '..'])
      expect(
        await t.deliver('inbound', received({ email_id: id, subject: `dots ${id}`, text: 'hi' })),
      ).toEqual({
        outcome: 'stored',
      });
    expect(fake.requests.length).toBe(asked);
    expect(await threadsOf(t, owner.id, account.id)).toHaveLength(2);
  });

  it('finishes with no_account without asking the provider when no named recipient has an account', async () => {
    const t = setup({ provider: fake.config() });
    await withAccount(t);
    const asked = fake.requests.length;
    // The provider does not know this email either: the recipients decide first.
    expect(
      await t.deliver('inbound', received({ email_id: 'stranger-1', to: ['nobody@elsewhere.test'] })),
    ).toEqual({ outcome: 'no_account' });
    expect(fake.requests.length).toBe(asked);
  });

  it('throws on a provider 5xx so the outbox retries, and the retry stores the message once', async () => {
    const t = setup({ provider: fake.config() });
    const { owner, account } = await withAccount(t);
    fake.emails.set('p-5xx', { text: 'body' });
    fake.fail(/p-5xx$/, { status: 502, times: 1 });
    const payload = received({ email_id: 'p-5xx' });
    await expect(t.deliver('inbound', payload, { id: 'e5' })).rejects.toThrow();
    expect(await t.deliver('inbound', payload, { id: 'e5', attempt: 2 })).toEqual({ outcome: 'stored' });
    expect(await threadsOf(t, owner.id, account.id)).toHaveLength(1);
  });

  it('dates a message by when its webhook was accepted, so a late delivery keeps its place', async () => {
    const t = setup();
    const { owner, account } = await withAccount(t);
    const accepted = new Date(t.clock.now().getTime() - 60_000);
    await t.deliver('inbound', received({ email_id: 'p-later', subject: 'Accepted later' }));
    // Accepted a minute earlier, delivered only now (a retry, a slow provider).
    await t.deliver('inbound', received({ email_id: 'p-early', subject: 'Accepted earlier' }), {
      createdAt: accepted,
    });
    const threads = await threadsOf(t, owner.id, account.id);
    expect(threads.map((x) => x.subject)).toEqual(['Accepted later', 'Accepted earlier']);
    expect(threads[1]!.lastMessageAt).toBe(accepted.toISOString());
  });

  /** A provider email with text attachments: `[id, filename, content]`. */
  const withTextFiles = (emailId: string, files: Array<[string, string, string]>) =>
    fake.emails.set(emailId, {
      text: 'see attached',
      attachments: files.map(([id, filename, content]) => ({
        id,
        filename,
        contentType: 'text/plain',
        bytes: Buffer.from(content),
      })),
    });

  it('stores the other attachments when one download fails with a 5xx, notifies, and retries for the missing one only', async () => {
    const { logger, lines } = recordingLogger();
    const t = setup({ provider: fake.config(), logger });
    const { owner, account } = await withAccount(t);
    withTextFiles('p-att', [
      ['ok-1', 'a.txt', 'a'],
      ['broken', 'b.txt', 'b'],
      ['ok-2', 'c.txt', 'c'],
    ]);
    fake.fail(/attachments\/broken$/, { status: 500 });
    const payload = received({ email_id: 'p-att' });
    await expect(t.deliver('inbound', payload, { id: 'e-att' })).rejects.toThrow(/attachment/);
    const failed = lines.find((l) => l.fields.event === 'inbox_attachment_failed');
    expect(failed?.fields).toMatchObject({ outboxEventId: 'e-att', attachment: 1, retry: true });
    // Readable and announced before the retry: only the attachment waits.
    expect(t.notifier.sent).toHaveLength(1);

    fake.clearFaults();
    expect(await t.deliver('inbound', payload, { id: 'e-att', attempt: 2 })).toEqual({ outcome: 'resumed' });
    const [thread] = await threadsOf(t, owner.id, account.id);
    const { messages } = await t.ph.inbox.getThread(owner.id, thread!.id);
    expect(messages).toHaveLength(1);
    expect(messages[0]!.attachments.map((a) => a.filename)).toEqual(['a.txt', 'c.txt', 'b.txt']);
    expect(t.notifier.sent).toHaveLength(1);
  });

  it('retries for an attachment whose download timed out', async () => {
    const t = setup({ provider: fake.config({ timeoutMs: 100 }) });
    const { owner, account } = await withAccount(t);
    withTextFiles('p-slow', [['slow', 'a.txt', 'a']]);
    fake.fail(/attachments\/slow$/, { delayMs: 300, times: 1 });
    const payload = received({ email_id: 'p-slow' });
    await expect(t.deliver('inbound', payload, { id: 'e-slow' })).rejects.toThrow(/attachment/);
    expect(await t.deliver('inbound', payload, { id: 'e-slow', attempt: 2 })).toEqual({ outcome: 'resumed' });
    const [thread] = await threadsOf(t, owner.id, account.id);
    const { messages } = await t.ph.inbox.getThread(owner.id, thread!.id);
    expect(messages[0]!.attachments.map((a) => a.filename)).toEqual(['a.txt']);
  });

  it('leaves downloads to a retry once its attachment budget is spent, so a hanging provider cannot hold the worker', async () => {
    const { logger, lines } = recordingLogger();
    const t = setup({
      provider: fake.config({ timeoutMs: 150 }),
      logger,
      inbox: { attachmentBudgetMs: 250 },
    });
    const { owner, account } = await withAccount(t);
    withTextFiles(
      'p-hang',
      Array.from({ length: 20 }, (_, i): [string, string, string] => [`hang-${i}`, `f${i}.txt`, `${i}`]),
    );
    fake.fail(/attachments\/hang-\d+$/, { status: 503 });
    const payload = received({ email_id: 'p-hang' });
    // The budget is wall time: here the wall clock moves past it the moment the first download
    // reaches the provider, however fast or loaded the machine is.
    const seen = fake.requests.length;
    const real = Date.now.bind(Date);
    const spent = () => fake.requests.slice(seen).some((r) => /attachments\/hang-/.test(r.path));
    const wall = vi.spyOn(Date, 'now').mockImplementation(() => real() + (spent() ? 1000 : 0));
    try {
      await expect(t.deliver('inbound', payload, { id: 'e-hang' })).rejects.toThrow(
        '20 attachment download(s) failed or deferred',
      );
    } finally {
      wall.mockRestore();
    }
    // One download was tried (and failed); the other 19 wait for the retry untried.
    expect(fake.requests.slice(seen).filter((r) => /attachments\/hang-/.test(r.path))).toHaveLength(1);
    expect(lines.find((l) => l.fields.event === 'inbox_attachments_deferred')?.fields).toMatchObject({
      outboxEventId: 'e-hang',
      deferred: 19,
    });
    // The message is readable and announced meanwhile; a retry with the provider back finishes it.
    expect(t.notifier.sent).toHaveLength(1);
    fake.clearFaults();
    expect(await t.deliver('inbound', payload, { id: 'e-hang', attempt: 2 })).toEqual({ outcome: 'resumed' });
    const [thread] = await threadsOf(t, owner.id, account.id);
    const { messages } = await t.ph.inbox.getThread(owner.id, thread!.id);
    expect(messages[0]!.attachments).toHaveLength(20);
  });

  it('spends at most half of what is left of the lease on downloads, whatever the budget', async () => {
    const { logger, lines } = recordingLogger();
    const t = setup({ provider: fake.config({ timeoutMs: 150 }), logger });
    await withAccount(t);
    withTextFiles(
      'p-lease',
      Array.from({ length: 20 }, (_, i): [string, string, string] => [`hang-${i}`, `f${i}.txt`, `${i}`]),
    );
    fake.fail(/attachments\/hang-\d+$/, { delayMs: 1000 });
    const t0 = Date.now();
    // The default budget (2 min) would try all 20 (3 s); a lease ending in 600 ms leaves 300.
    await expect(
      t.deliver('inbound', received({ email_id: 'p-lease' }), { id: 'e-lease', leaseEndsAt: t0 + 600 }),
    ).rejects.toThrow('20 attachment download(s) failed or deferred');
    expect(Date.now() - t0).toBeLessThan(1500);
    const deferred = lines.find((l) => l.fields.event === 'inbox_attachments_deferred')?.fields;
    expect(deferred?.deferred).toBeGreaterThanOrEqual(16);
    expect(t.notifier.sent).toHaveLength(1);
  });

  it.each([
    [2, 'att-2'],
    [undefined, 'att-1'],
    [0, 'att-1'],
  ])(
    "rotates downloads over the event's own maxAttempts (%s: attempt 2 starts at %s)",
    async (maxAttempts, first) => {
      const t = setup({ provider: fake.config() });
      await withAccount(t);
      withTextFiles(
        'p-turns',
        Array.from({ length: 4 }, (_, i): [string, string, string] => [`att-${i}`, `f${i}.txt`, `${i}`]),
      );
      fake.fail(/attachments\/att-\d$/, { status: 500, times: 4 });
      const payload = received({ email_id: 'p-turns' });
      await expect(t.deliver('inbound', payload, { id: 'e-turns', maxAttempts })).rejects.toThrow(
        /attachment/,
      );
      const asked = fake.requests.length;
      // With 4 attachments: 2 attempts start attempt 2 at the third; the default 10 (also for a
      // count that is none) at the second.
      await t.deliver('inbound', payload, { id: 'e-turns', attempt: 2, maxAttempts });
      const downloads = fake.requests.slice(asked).filter((r) => /\/attachments\/att-/.test(r.path));
      expect(downloads[0]!.path).toMatch(new RegExp(`/${first}$`));
    },
  );

  it('starts each retry further down the list, so attachments behind ones that always hang are stored', async () => {
    const t = setup({
      provider: fake.config({ timeoutMs: 150 }),
      inbox: { attachmentBudgetMs: 250 },
    });
    const { owner, account } = await withAccount(t);
    withTextFiles(
      'p-stuck',
      Array.from({ length: 20 }, (_, i): [string, string, string] => [`f-${i}`, `f${i}.txt`, `${i}`]),
    );
    // The first four never answer in time; each attempt's budget lets two of them time out.
    fake.fail(/attachments\/f-[0-3]$/, { delayMs: 1000 });
    const payload = received({ email_id: 'p-stuck' });
    const stored = async () => {
      const [thread] = await threadsOf(t, owner.id, account.id);
      const { messages } = await t.ph.inbox.getThread(owner.id, thread!.id);
      return messages[0]!.attachments.map((a) => a.filename);
    };
    // Attempt 1 starts at the first, attempt 2 two further on (a tenth of 20): both hang.
    for (const attempt of [1, 2]) {
      await expect(t.deliver('inbound', payload, { id: 'e-stuck', attempt })).rejects.toThrow(/attachment/);
      expect(await stored()).toEqual([]);
    }
    // Attempt 3 starts at the fifth: the sixteen that answer are stored, the hanging ones wait.
    await expect(t.deliver('inbound', payload, { id: 'e-stuck', attempt: 3 })).rejects.toThrow(
      '4 attachment download(s) failed or deferred',
    );
    expect(await stored()).toEqual(Array.from({ length: 16 }, (_, i) => `f${i + 4}.txt`));
  });

  it('cuts a running download short when the dispatcher stops, and leaves it to a retry', async () => {
    const t = setup({ provider: fake.config({ timeoutMs: 10_000 }) });
    const { owner, account } = await withAccount(t);
    withTextFiles('p-stop', [['slow-at-stop', 'a.txt', 'a']]);
    fake.fail(/attachments\/slow-at-stop$/, { delayMs: 5000, times: 1 });
    const payload = received({ email_id: 'p-stop' });
    const { error, ms } = await deliverStopped(t, payload, 'e-stop');
    expect(error).toMatch('1 attachment download(s) failed or deferred');
    expect(ms).toBeLessThan(2000);
    expect(await t.deliver('inbound', payload, { id: 'e-stop', attempt: 2 })).toEqual({ outcome: 'resumed' });
    const [thread] = await threadsOf(t, owner.id, account.id);
    const { messages } = await t.ph.inbox.getThread(owner.id, thread!.id);
    expect(messages[0]!.attachments.map((a) => a.filename)).toEqual(['a.txt']);
  });

  it('cuts the message fetch short when the dispatcher stops, and leaves the event to a retry', async () => {
    const t = setup({ provider: fake.config({ timeoutMs: 10_000 }) });
    await withAccount(t);
    fake.emails.set('p-fetch-stop', { subject: 'Hello', text: 'hi' });
    fake.fail(/receiving\/p-fetch-stop$/, { delayMs: 5000, times: 1 });
    const payload = received({ email_id: 'p-fetch-stop' });
    const { error, ms } = await deliverStopped(t, payload, 'e-fetch-stop');
    expect(error).toMatch('provider call cancelled');
    expect(ms).toBeLessThan(2000);
    expect(await t.deliver('inbound', payload, { id: 'e-fetch-stop', attempt: 2 })).toEqual({
      outcome: 'stored',
    });
  });

  it('does not retry for an attachment that would fail the same way again (over the size cap)', async () => {
    const { logger, lines } = recordingLogger();
    const t = setup({ provider: fake.config({ maxAttachmentBytes: 4 }), logger });
    const { owner, account } = await withAccount(t);
    withTextFiles('p-big', [
      ['big', 'a.txt', 'too large'],
      ['small', 'b.txt', 'b'],
    ]);
    expect(await t.deliver('inbound', received({ email_id: 'p-big' }))).toEqual({ outcome: 'stored' });
    const failed = lines.find((l) => l.fields.event === 'inbox_attachment_failed');
    expect(failed?.fields).toMatchObject({ attachment: 0, retry: false });
    const [thread] = await threadsOf(t, owner.id, account.id);
    const { messages } = await t.ph.inbox.getThread(owner.id, thread!.id);
    expect(messages[0]!.attachments.map((a) => a.filename)).toEqual(['b.txt']);
  });

  it('accepts base64 attachment content given inline in a payload', async () => {
    const t = setup();
    const { owner, account } = await withAccount(t);
    await t.deliver(
      'inbound',
      received({
        text: 'x',
        attachments: [
          {
            filename: 'x.txt',
            content_type: 'text/plain',
            content: Buffer.from('inline!').toString('base64'),
          },
          { filename: 'meta-only.png', content_type: 'image/png' },
        ],
      }),
    );
    const [thread] = await threadsOf(t, owner.id, account.id);
    const { messages } = await t.ph.inbox.getThread(owner.id, thread!.id);
    expect(messages[0]!.attachments.map((a) => a.filename)).toEqual(['x.txt']);
  });

  it('drops bidirectional controls from attachment names, so no extension is disguised', async () => {
    const t = setup();
    const { owner, account } = await withAccount(t);
    const content = Buffer.from('x').toString('base64');
    await t.deliver(
      'inbound',
      received({
        text: 'x',
        attachments: [
          { filename: 'invoice\u202Efdp.exe', content_type: 'application/pdf', content },
          { filename: '\u2067\u200fتقرير.pdf', content_type: 'application/pdf', content },
        ],
      }),
    );
    const [thread] = await threadsOf(t, owner.id, account.id);
    const { messages } = await t.ph.inbox.getThread(owner.id, thread!.id);
    expect(messages[0]!.attachments.map((a) => a.filename)).toEqual(['invoicefdp.exe', 'تقرير.pdf']);
  });

  it('stores the first 500 attachments of a mail and logs how many it left out', async () => {
    const { logger, lines } = recordingLogger();
    const t = setup({ logger });
    const { owner, account } = await withAccount(t);
    const attachments = Array.from({ length: 503 }, (_, i) => ({
      filename: `f${i}.txt`,
      content_type: 'text/plain',
      content: Buffer.from(`file ${i}`).toString('base64'),
    }));
    const id = 'evt-many-attachments';
    expect(await t.deliver('inbound', received({ text: 'x', attachments }), { id })).toEqual({
      outcome: 'stored',
    });
    const [thread] = await threadsOf(t, owner.id, account.id);
    const { messages } = await t.ph.inbox.getThread(owner.id, thread!.id);
    expect(messages[0]!.attachments).toHaveLength(500);
    expect(messages[0]!.attachments.at(-1)!.filename).toBe('f499.txt');
    const line = lines.find((l) => l.fields.event === 'inbox_attachments_dropped');
    expect(line).toMatchObject({ level: 'warn', fields: { outboxEventId: id, kept: 500, dropped: 3 } });
  });
});

describe('inbound consumer: raw MIME', () => {
  const files = readdirSync(new URL('mime/', FIXTURES)).filter((f) => f.endsWith('.eml'));

  it.each(files)('stores %s from raw MIME, plain and base64, without crashing', async (file) => {
    const t = setup();
    const { owner, account } = await withAccount(t);
    const raw = fixture(`mime/${file}`);
    for (const [i, body] of [raw, Buffer.from(raw, 'utf8').toString('base64')].entries()) {
      const out = await t.deliver(
        'inbound',
        {
          type: 'email.received',
          data: { raw: body, received_for: ['support@acme.test'] },
        },
        { id: `${file}-${i}` },
      );
      expect(out).toMatchObject({ outcome: expect.stringMatching(/^(stored|duplicate)$/) });
    }
    const threads = await threadsOf(t, owner.id, account.id);
    expect(threads.length).toBeGreaterThanOrEqual(1);
    const { messages } = await t.ph.inbox.getThread(owner.id, threads[0]!.id);
    expect(typeof messages[0]!.text).toBe('string');
  });

  it('reads sender, recipients, subject, ids and attachments from the MIME message', async () => {
    const t = setup();
    const { owner, account } = await withAccount(t, 'replies@example.com');
    await t.deliver('inbound', { data: { raw: fixture('mime/chatwoot__multiple_in_reply_to.eml') } });
    const [thread] = await threadsOf(t, owner.id, account.id);
    const { messages } = await t.ph.inbox.getThread(owner.id, thread!.id);
    expect(messages[0]).toMatchObject({
      from: 'Sony Mathew <Sony@chatwoot.com>',
      to: ['Replies <replies@example.com>'],
      subject: "Discussion: Let's debate these attachments",
      messageId: '0CB459E0-0336-41DA-BC88-E6E28C697DDB@chatwoot.com',
      text: expect.stringContaining("Let's talk about these images"),
    });

    const t2 = setup();
    const two = await withAccount(t2);
    await t2.deliver('inbound', {
      data: { raw: fixture('mime/chatwoot__email_with_inline_pdf.eml'), received_for: ['support@acme.test'] },
    });
    const [th] = await threadsOf(t2, two.owner.id, two.account.id);
    const detail = await t2.ph.inbox.getThread(two.owner.id, th!.id);
    const pdf = detail.messages[0]!.attachments.find((a) => a.contentType === 'application/pdf');
    expect(pdf?.size).toBe(13264);
  });
});

describe('inbound consumer: HTML-only mail', () => {
  it('derives the text of a deeply nested HTML-only MIME mail in one pass, not through mailparser', async () => {
    const t = setup();
    const { owner, account } = await withAccount(t);
    // 200,000 nested divs in under 1 MiB: mailparser's own HTML-to-text took seconds on this.
    const html = `${'<div>'.repeat(200_000)}Deep hello${'</div>'.repeat(200_000)}`;
    const raw = [
      'From: Ann <ann@customer.test>',
      'To: support@acme.test',
      'Subject: Nested',
      'Message-ID: <nested-1@customer.test>',
      'MIME-Version: 1.0',
      'Content-Type: text/html; charset=utf-8',
      '',
      html,
    ].join('\r\n');
    expect(await t.deliver('inbound', { data: { raw } })).toEqual({ outcome: 'stored' });
    const [thread] = await threadsOf(t, owner.id, account.id);
    const { messages } = await t.ph.inbox.getThread(owner.id, thread!.id);
    expect(messages[0]).toMatchObject({ subject: 'Nested', text: 'Deep hello' });
    expect(messages[0]!.html!.length).toBe(html.length);
  });
  it('stores text no longer than the HTML for 99 nested quotes (the worker cuts quoting off)', async () => {
    const t = setup();
    const { owner, account } = await withAccount(t);
    const prefix = '<blockquote>'.repeat(99);
    const html = prefix + '<p>x'.repeat(Math.floor((255 * 1024 - prefix.length) / 4));
    const data = { from: 'ann@customer.test', to: ['support@acme.test'], subject: 'Quotes', html };
    expect(await t.deliver('inbound', { data })).toEqual({ outcome: 'stored' });
    const [thread] = await threadsOf(t, owner.id, account.id);
    const { messages } = await t.ph.inbox.getThread(owner.id, thread!.id);
    // 25 MiB of `> > > ...` lines before.
    expect(messages[0]!.text.length).toBeLessThanOrEqual(html.length);
    expect(messages[0]!.text).not.toMatch(/^(?:> ){11}/m);
  });
});

describe('inbound consumer: threading', () => {
  it('threads a reply whose References name the Message-ID of a prior outbound message', async () => {
    const t = setup();
    const { owner, account } = await withAccount(t, 'care@example.com');
    const out = await t.ph.inbox.recordOutbound({
      accountId: account.id,
      providerMessageId: 'prov-1',
      messageId: '<4e6e35f5a38b4_479f13bb90078178@small-app-01.mail>',
      to: 'sony@chatwoot.com',
      subject: 'Something else entirely',
      text: 'hello',
    });
    await t.deliver('inbound', { data: { raw: fixture('mime/chatwoot__mail_with_references.eml') } });
    const threads = await threadsOf(t, owner.id, account.id);
    expect(threads).toHaveLength(1);
    expect(threads[0]).toMatchObject({ id: out.threadId, messageCount: 2 });
  });

  it.each([
    ['chatwoot__in_reply_to.eml', '<0CB459E0-0336-41DA-BC88-E6E28C697DDB@chatwoot.com>'],
    ['chatwoot__multiple_in_reply_to.eml', '<4e6e35f5a38b4_479f13bb90078131@small-app-01.mail>'],
    ['chatwoot__references.eml', '<test-in-reply-to>'],
    ['chatwoot__references-same.eml', '<TEST-REFERENCE-ID>'],
  ])('threads %s onto the outbound message it names (%s)', async (file, sentId) => {
    const t = setup();
    const { owner, account } = await withAccount(t);
    const out = await t.ph.inbox.recordOutbound({
      accountId: account.id,
      providerMessageId: `prov-${file}`,
      messageId: sentId,
      to: 'someone@else.test',
      subject: 'Unrelated subject',
    });
    t.clock.advance(1000);
    await t.ph.inbox.recordOutbound({
      accountId: account.id,
      providerMessageId: 'decoy',
      messageId: '<decoy@acme.test>',
      to: 'sony@chatwoot.com',
      subject: "Discussion: Let's debate these attachments",
    });
    const raw = fixture(`mime/${file}`);
    expect(await t.deliver('inbound', { data: { raw, received_for: ['support@acme.test'] } })).toEqual({
      outcome: 'stored',
    });
    const threads = await threadsOf(t, owner.id, account.id);
    expect(threads.find((x) => x.id === out.threadId)?.messageCount).toBe(2);
  });

  it('threads chatwoot__reply_cc.eml by subject and sender, the account found through Cc', async () => {
    const t = setup();
    const { owner, account } = await withAccount(t, 'test@example.com');
    const out = await t.ph.inbox.recordOutbound({
      accountId: account.id,
      providerMessageId: 'prov-cc',
      to: 'Sony <sony@quicksales.vn>',
      subject: "Re: Discussion: Let's debate these attachments",
    });
    expect(await t.deliver('inbound', { data: { raw: fixture('mime/chatwoot__reply_cc.eml') } })).toEqual({
      outcome: 'stored',
    });
    const threads = await threadsOf(t, owner.id, account.id);
    expect(threads).toEqual([expect.objectContaining({ id: out.threadId, messageCount: 2 })]);
  });

  it('threads by In-Reply-To against the provider id, by local part and case-insensitively', async () => {
    const t = setup();
    const { owner, account } = await withAccount(t);
    const out = await t.ph.inbox.recordOutbound({
      accountId: account.id,
      providerMessageId: '56761188-7520-42d8-8898-ff6fc54ce618',
      to: ['ann@customer.test'],
      subject: 'Welcome',
    });
    await t.deliver(
      'inbound',
      received({
        subject: 'Totally different',
        text: 'reply',
        headers: { 'In-Reply-To': '<56761188-7520-42D8-8898-FF6FC54CE618@email.amazonses.com>' },
      }),
    );
    const threads = await threadsOf(t, owner.id, account.id);
    expect(threads.map((x) => x.id)).toEqual([out.threadId]);
  });

  it('prefers the thread where the sender was a recipient over a newer one with the same subject', async () => {
    const t = setup();
    const { owner, account } = await withAccount(t);
    const out = await t.ph.inbox.recordOutbound({
      accountId: account.id,
      providerMessageId: 'prov-ann',
      to: 'Ann <ANN@customer.test>',
      subject: 'Invoice 42',
    });
    t.clock.advance(60_000);
    await t.ph.inbox.recordOutbound({
      accountId: account.id,
      providerMessageId: 'prov-bob',
      to: 'bob@other.test',
      subject: 'Invoice 42',
    });
    t.clock.advance(60_000);
    await t.deliver('inbound', received({ from: 'ann@customer.test', subject: 'RE: Re:invoice  42' }));
    const threads = await threadsOf(t, owner.id, account.id);
    expect(threads).toHaveLength(2);
    expect(threads.find((x) => x.id === out.threadId)?.messageCount).toBe(2);
  });

  it('falls back to the normalized subject alone, within the window only, never on empty subjects', async () => {
    const t = setup();
    const { owner, account } = await withAccount(t);
    await t.deliver('inbound', received({ from: 'a@x.test', subject: 'Order 7' }));
    await t.deliver('inbound', received({ from: 'b@x.test', subject: 'Fwd: order 7' }));
    expect(await threadsOf(t, owner.id, account.id)).toHaveLength(1);

    t.clock.advance(91 * DAY);
    await t.deliver('inbound', received({ from: 'c@x.test', subject: 'Re: Order 7' }));
    expect(await threadsOf(t, owner.id, account.id)).toHaveLength(2);

    await t.deliver('inbound', received({ subject: '' }));
    await t.deliver('inbound', received({ subject: 'Re:' }));
    expect(await threadsOf(t, owner.id, account.id)).toHaveLength(4);
  });

  it('puts new mails with one new subject that arrive together into one thread', async () => {
    const t = setup();
    const { owner, account } = await withAccount(t);
    const outcomes = await Promise.all(
      ['a', 'b', 'c', 'd'].map((who) =>
        t.deliver('inbound', received({ from: `${who}@x.test`, subject: 'Outage right now' })),
      ),
    );
    expect(outcomes).toEqual(Array(4).fill({ outcome: 'stored' }));
    const threads = await threadsOf(t, owner.id, account.id);
    expect(threads).toHaveLength(1);
    expect(threads[0]!.messageCount).toBe(4);
  });

  it('honours a configured threading window', async () => {
    const t = setup({ inbox: { threadingWindowDays: 1 } });
    const { owner, account } = await withAccount(t);
    await t.deliver('inbound', received({ subject: 'Ping' }));
    t.clock.advance(2 * DAY);
    await t.deliver('inbound', received({ subject: 'Ping' }));
    expect(await threadsOf(t, owner.id, account.id)).toHaveLength(2);
  });
});

describe('inbound consumer: notifications', () => {
  it('notifies every owner and member once, and only the failed one again on retry', async () => {
    const t = setup();
    const { owner, account } = await withAccount(t);
    const member = await t.user();
    await t.ph.inbox.addMember(owner.id, account.id, { email: member.email, role: 'member' });
    t.notifier.failuresLeft = 1; // the first notification (the owner's) fails
    const payload = received({ email_id: 'n-1' });
    await expect(t.deliver('inbound', payload, { id: 'n' })).rejects.toThrow('notification failed');
    expect(t.notifier.sent.map((s) => s.notice.userId)).toEqual([member.id]);
    expect(await t.deliver('inbound', payload, { id: 'n', attempt: 2 })).toEqual({ outcome: 'resumed' });
    expect(await t.deliver('inbound', payload, { id: 'n', attempt: 3 })).toEqual({ outcome: 'duplicate' });
    expect(t.notifier.sent.map((s) => s.notice.userId)).toEqual([member.id, owner.id]);
    const keys = t.notifier.sent.map((s) => s.key);
    expect(new Set(keys).size).toBe(2);
    expect(await threadsOf(t, owner.id, account.id)).toHaveLength(1);
  });

  it('never finishes while another delivery of the event still holds a notification: its send may yet fail', async () => {
    // A hanging notifier outlives the outbox lease, so the event is delivered again meanwhile.
    let failFirst!: (e: Error) => void;
    const sent: string[] = [];
    let calls = 0;
    const t = setup({
      notifier: {
        notify: (n) => {
          calls += 1;
          if (calls === 1) return new Promise<void>((_, reject) => (failFirst = reject));
          sent.push(n.userId);
          return Promise.resolve();
        },
      },
    });
    const { owner } = await withAccount(t);
    const payload = received({ email_id: 'held-1' });
    const first = t.deliver('inbound', payload, { id: 'h' });
    await vi.waitFor(() => expect(calls).toBe(1));
    // Back once the holder's claim is sent, released or run out, not on the quick backoff that
    // could use up the attempts meanwhile.
    const held = await t.deliver('inbound', payload, { id: 'h', attempt: 2 }).catch((e: unknown) => e);
    expect(held).toBeInstanceOf(RetryLater);
    expect((held as RetryLater).notBefore.getTime() - t.clock.now().getTime()).toBe(5 * 60_000);
    // A duplicate webhook of the same mail (another event) does not finish the message either:
    // marking it processed would turn the holder's retry into a no-op.
    await expect(t.deliver('inbound', payload, { id: 'h-dup' })).rejects.toThrow(
      'notification held by another event',
    );
    // Near its last attempts it waits out the notice's lease instead of going dead meanwhile.
    const late = await t.deliver('inbound', payload, { id: 'h-dup', attempt: 8 }).catch((e: unknown) => e);
    expect(late).toBeInstanceOf(RetryLater);
    expect((late as RetryLater).notBefore.getTime() - t.clock.now().getTime()).toBe(5 * 60_000);
    failFirst(new Error('smtp hung up'));
    await expect(first).rejects.toThrow('notification failed');
    expect(await t.deliver('inbound', payload, { id: 'h', attempt: 3 })).toEqual({ outcome: 'resumed' });
    expect(await t.deliver('inbound', payload, { id: 'h-dup', attempt: 2 })).toEqual({
      outcome: 'duplicate',
    });
    expect(sent).toEqual([owner.id]);
  });

  it('stops waiting for a notice another event holds once the dispatcher stops, and leaves it to a retry', async () => {
    let release!: () => void;
    let calls = 0;
    const t = setup({
      notifier: {
        notify: () => {
          calls += 1;
          return calls === 1 ? new Promise<void>((r) => (release = r)) : Promise.resolve();
        },
      },
    });
    await withAccount(t);
    const payload = received({ email_id: 'held-at-stop' });
    const first = t.deliver('inbound', payload, { id: 'first' });
    await vi.waitFor(() => expect(calls).toBe(1));
    const stop = new AbortController();
    const t0 = Date.now();
    const dup = t.deliver('inbound', payload, { id: 'dup', signal: stop.signal }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 80)); // inside the waits for the holder (about 1.5 s)
    stop.abort();
    expect(String(await dup)).toMatch('notification held by another event');
    expect(Date.now() - t0).toBeLessThan(1000);
    release();
    await expect(first).resolves.toEqual({ outcome: 'stored' });
    expect(await t.deliver('inbound', payload, { id: 'dup', attempt: 2 })).toEqual({ outcome: 'duplicate' });
  });

  it('finishes duplicate webhooks of one mail delivered side by side without a retry, each notice sent once', async () => {
    // Each delivery claims some members' notices before the other gets to them; each then
    // waits for the other's sends instead of failing for the outbox to retry.
    const sent: string[] = [];
    const { logger, lines } = recordingLogger();
    const t = setup({
      logger,
      notifier: {
        notify: async (n) => {
          await new Promise((r) => setTimeout(r, 20));
          sent.push(n.userId);
        },
      },
    });
    const { owner, account } = await withAccount(t);
    const members = [];
    for (let i = 0; i < 3; i += 1) {
      const member = await t.user();
      await t.ph.inbox.addMember(owner.id, account.id, { email: member.email, role: 'member' });
      members.push(member.id);
    }
    const payload = received({ email_id: 'side-by-side' });
    const outcomes = await Promise.all([
      t.deliver('inbound', payload, { id: 'a' }),
      t.deliver('inbound', payload, { id: 'b' }),
    ]);
    expect(outcomes.map((o) => o?.outcome).sort()).toEqual(['resumed', 'stored']);
    // The log says which delivery stored the message and which only finished it.
    const finished = lines.filter((l) => l.fields.event === 'inbox_message_stored');
    expect(finished.map((l) => l.fields.outcome).sort()).toEqual(['resumed', 'stored']);
    expect(sent.sort()).toEqual([owner.id, ...members].sort());
    expect(await t.deliver('inbound', payload, { id: 'c' })).toEqual({ outcome: 'duplicate' });
  });

  it('mails owners through the mailer by default, with CR/LF removed from the subject', async () => {
    const mails: Array<{ to: string; subject: string }> = [];
    const t = setup({ notifier: undefined, mailer: { send: async (m) => void mails.push(m) } });
    const { owner } = await withAccount(t);
    await t.deliver('inbound', received({ subject: 'Hi\r\nBcc: victim@x.test' }));
    await t.deliver('inbound', received({ email_id: 'ew', subject: '=?UTF-8?Q?Hi=0D=0ABcc:_v@x.test?=' }));
    expect(mails).toEqual([
      expect.objectContaining({ to: owner.email, subject: 'New message in Support: Hi Bcc: victim@x.test' }),
      expect.objectContaining({ subject: 'New message in Support: =\u2060?UTF-8?Q?Hi=0D=0ABcc:_v@x.test?=' }),
    ]);
  });
});
