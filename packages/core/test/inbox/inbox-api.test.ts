import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { directoryFiles, type Mail } from '@postern/core';
import { memoryFiles } from '@postern/core/memory';
import { FakeMailProvider, recordingLogger } from '@postern/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { received, setup } from './helpers.js';

async function problem(p: Promise<unknown>) {
  try {
    await p;
  } catch (e) {
    return (e as { code?: string }).code;
  }
  return 'no error';
}

async function world(options: Parameters<typeof setup>[0] = {}) {
  const t = setup(options);
  const owner = await t.user('owner@users.test');
  const stranger = await t.user('stranger@users.test');
  const account = await t.ph.inbox.createAccount(owner.id, { address: 'Support@Acme.test', name: 'Support' });
  return { t, owner, stranger, account };
}

/** The owner's newest thread of the account (the one a mail just started or joined). */
async function newestThread(t: ReturnType<typeof setup>, owner: { id: string }, account: { id: string }) {
  return (await t.ph.inbox.listThreads(owner.id, account.id)).threads[0];
}

describe('inbox API: accounts and members', () => {
  it('creates an account with a canonical address and the caller as owner', async () => {
    const { t, owner, account } = await world();
    expect(account).toMatchObject({ address: 'support@acme.test', name: 'Support', role: 'owner' });
    expect(await t.ph.inbox.listAccounts(owner.id)).toEqual([account]);
  });

  it('refuses a second account for an address, and addresses a host policy forbids', async () => {
    const { t, stranger } = await world({
      inbox: { canCreateAccount: ({ address }) => address.endsWith('@acme.test') },
    });
    expect(
      await problem(t.ph.inbox.createAccount(stranger.id, { address: 'support@acme.test', name: 'X' })),
    ).toBe('validation_failed');
    expect(
      await problem(t.ph.inbox.createAccount(stranger.id, { address: 'ceo@other.test', name: 'X' })),
    ).toBe('forbidden');
  });

  it('lets owners add members by email; members and strangers may not', async () => {
    const { t, owner, stranger, account } = await world();
    const member = await t.user('member@users.test');
    const added = await t.ph.inbox.addMember(owner.id, account.id, {
      email: 'MEMBER@users.test',
      role: 'member',
    });
    expect(added).toEqual({
      member: {
        accountId: account.id,
        userId: member.id,
        email: 'member@users.test',
        role: 'member',
        pending: false,
      },
      created: true,
    });
    expect(await t.ph.inbox.listAccounts(member.id)).toEqual([{ ...account, role: 'member' }]);
    expect(
      await problem(t.ph.inbox.addMember(member.id, account.id, { email: stranger.email, role: 'owner' })),
    ).toBe('forbidden');
    expect(
      await problem(t.ph.inbox.addMember(stranger.id, account.id, { email: stranger.email, role: 'owner' })),
    ).toBe('forbidden');
    expect(
      await problem(t.ph.inbox.addMember(owner.id, 'nope', { email: stranger.email, role: 'owner' })),
    ).toBe('not_found');
    expect(
      await problem(t.ph.inbox.addMember(owner.id, account.id, { email: 'ghost@x.test', role: 'member' })),
    ).toBe('not_found');
  });

  it('keeps a member added by an unproven address pending: no reads, no replies, no notices, not listed, until proven', async () => {
    const { logger, lines } = recordingLogger();
    const { t, owner, account } = await world({ logger });
    // Someone registered bob@ first and never proved it.
    const bob = await t.user('bob@users.test', { emailVerified: false });
    const added = await t.ph.inbox.addMember(owner.id, account.id, { email: bob.email, role: 'owner' });
    expect(added.member).toMatchObject({ userId: bob.id, role: 'owner', pending: true });
    await t.deliver('inbound', received({ to: ['support@acme.test'], subject: 'Payroll' }));
    const thread = await newestThread(t, owner, account);
    expect(await problem(t.ph.inbox.listThreads(bob.id, account.id))).toBe('forbidden');
    expect(await problem(t.ph.inbox.getThread(bob.id, thread!.id))).toBe('forbidden');
    expect(await problem(t.ph.inbox.reply(bob.id, thread!.id, { text: 'x' }))).toBe('forbidden');
    expect(await problem(t.ph.inbox.addMember(bob.id, account.id, { email: bob.email, role: 'owner' }))).toBe(
      'forbidden',
    );
    expect(await t.ph.inbox.listAccounts(bob.id)).toEqual([]);
    expect(
      lines.filter((l) => l.fields.event === 'authorization_denied').map((l) => l.fields.reason),
    ).toContain('inbox_address_unproven');
    expect(t.notifier.sent.map((n) => n.notice.userId)).toEqual([owner.id]);
    expect(await t.ph.inbox.listMembers(owner.id, account.id)).toEqual([
      expect.objectContaining({ userId: owner.id, role: 'owner', pending: false }),
      expect.objectContaining({ userId: bob.id, role: 'owner', pending: true }),
    ]);
    expect(await problem(t.ph.inbox.listMembers(bob.id, account.id))).toBe('forbidden');

    // The mailbox's owner proves it (a verification code, or a password reset): access at once.
    await t.stores.users.markEmailVerified(bob.id);
    expect((await t.ph.inbox.listThreads(bob.id, account.id)).threads).toHaveLength(1);
    expect(await t.ph.inbox.listAccounts(bob.id)).toEqual([{ ...account, role: 'owner' }]);
    expect(await t.ph.inbox.listMembers(owner.id, account.id)).toEqual([
      expect.objectContaining({ userId: owner.id, pending: false }),
      expect.objectContaining({ userId: bob.id, pending: false }),
    ]);
  });

  it('lets only the owners of an account claim a +tag of its address', async () => {
    const { t, owner, stranger } = await world();
    expect(
      await problem(
        t.ph.inbox.createAccount(stranger.id, { address: 'support+orders@acme.test', name: 'X' }),
      ),
    ).toBe('forbidden');
    const member = await t.user();
    const [account] = await t.ph.inbox.listAccounts(owner.id);
    await t.ph.inbox.addMember(owner.id, account!.id, { email: member.email, role: 'member' });
    expect(
      await problem(t.ph.inbox.createAccount(member.id, { address: 'support+orders@acme.test', name: 'X' })),
    ).toBe('forbidden');
    const tagged = await t.ph.inbox.createAccount(owner.id, {
      address: 'Support+Orders@acme.test',
      name: 'Orders',
    });
    expect(tagged).toMatchObject({ address: 'support+orders@acme.test', role: 'owner' });
    // A tag of an address nobody has claimed is a first claim like any other.
    expect(
      await t.ph.inbox.createAccount(stranger.id, { address: 'sales+leads@acme.test', name: 'Leads' }),
    ).toMatchObject({ role: 'owner' });
  });

  it('delivers a +tag to its base account unless the tagged account was made by an owner of the base', async () => {
    const { t, owner, stranger, account } = await world();
    const orders = await t.ph.inbox.createAccount(owner.id, {
      address: 'support+orders@acme.test',
      name: 'Orders',
    });
    // Claimed before the base existed (or before this rule): the claim keeps no mail of the base's.
    const early = await t.ph.inbox.createAccount(stranger.id, { address: 'sales+vip@acme.test', name: 'Sq' });
    const sales = await t.ph.inbox.createAccount(owner.id, { address: 'sales@acme.test', name: 'Sales' });

    await t.deliver(
      'inbound',
      received({ email_id: 'm1', to: ['support+orders@acme.test'], subject: 'Order 1' }),
    );
    await t.deliver(
      'inbound',
      received({ email_id: 'm2', to: ['sales+vip@acme.test'], subject: 'VIP deal' }),
    );
    await t.deliver(
      'inbound',
      received({ email_id: 'm3', to: ['support+other@acme.test'], subject: 'Other' }),
    );
    const subjects = async (userId: string, accountId: string) =>
      (await t.ph.inbox.listThreads(userId, accountId)).threads.map((x) => x.subject).sort();
    expect(await subjects(owner.id, orders.id)).toEqual(['Order 1']);
    expect(await subjects(owner.id, sales.id)).toEqual(['VIP deal']);
    expect(await subjects(stranger.id, early.id)).toEqual([]);
    expect(await subjects(owner.id, account.id)).toEqual(['Other']);
  });

  it('never leaves an account without an owner', async () => {
    const { t, owner, account } = await world();
    expect(
      await problem(t.ph.inbox.addMember(owner.id, account.id, { email: owner.email, role: 'member' })),
    ).toBe('validation_failed');
    const second = await t.user();
    await t.ph.inbox.addMember(owner.id, account.id, { email: second.email, role: 'owner' });
    const demoted = await t.ph.inbox.addMember(owner.id, account.id, { email: owner.email, role: 'member' });
    expect(demoted).toMatchObject({ member: { role: 'member' }, created: false });
  });
});

describe('inbox API: threads and attachments', () => {
  it('answers 404 for unknown ids and 403 for non-members on every read', async () => {
    const { t, owner, stranger, account } = await world();
    await t.deliver(
      'inbound',
      received({ attachments: [{ filename: 'a.txt', content_type: 'text/plain', content: 'YQ==' }] }),
    );
    const thread = await newestThread(t, owner, account);
    const { messages } = await t.ph.inbox.getThread(owner.id, thread!.id);
    const attachmentId = messages[0]!.attachments[0]!.id;

    expect(await problem(t.ph.inbox.listThreads(stranger.id, account.id))).toBe('forbidden');
    expect(await problem(t.ph.inbox.getThread(stranger.id, thread!.id))).toBe('forbidden');
    expect(await problem(t.ph.inbox.getAttachment(stranger.id, attachmentId))).toBe('forbidden');
    expect(await problem(t.ph.inbox.reply(stranger.id, thread!.id, { text: 'hi' }))).toBe('forbidden');
    // Access before validation: a stranger's invalid input is refused as a stranger's.
    expect(await problem(t.ph.inbox.reply(stranger.id, thread!.id, { text: '' }))).toBe('forbidden');
    expect(await problem(t.ph.inbox.listThreads(owner.id, 'nope'))).toBe('not_found');
    expect(await problem(t.ph.inbox.getThread(owner.id, 'nope'))).toBe('not_found');
    expect(await problem(t.ph.inbox.getAttachment(owner.id, 'nope'))).toBe('not_found');
    expect(await problem(t.ph.inbox.reply(owner.id, 'nope', { text: 'hi' }))).toBe('not_found');
    expect(await t.ph.inbox.listAccounts(stranger.id)).toEqual([]);
  });

  it('pages threads newest first with a cursor, without gaps or repeats', async () => {
    const { t, owner, account } = await world();
    for (let i = 0; i < 7; i++) {
      await t.deliver('inbound', received({ subject: `Topic ${i}` }));
      t.clock.advance(1000);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof t.ph.inbox.listThreads>> = await t.ph.inbox.listThreads(
        owner.id,
        account.id,
        { cursor, limit: 3 },
      );
      seen.push(...page.threads.map((x) => x.subject));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(['Topic 6', 'Topic 5', 'Topic 4', 'Topic 3', 'Topic 2', 'Topic 1', 'Topic 0']);
    expect(await problem(t.ph.inbox.listThreads(owner.id, account.id, { cursor: 'garbage' }))).toBe(
      'validation_failed',
    );
  });

  it('keeps attachment bytes in a directory under generated names only', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ph-files-'));
    try {
      const { t, owner, account } = await world({ files: directoryFiles(dir) });
      await t.deliver(
        'inbound',
        received({
          attachments: [
            {
              filename: '../../evil.sh',
              content_type: 'text/plain',
              content: Buffer.from('x').toString('base64'),
            },
          ],
        }),
      );
      const names = await readdir(dir);
      expect(names).toHaveLength(1);
      expect(names[0]).toMatch(/^[a-f0-9]{40}$/);
      const thread = await newestThread(t, owner, account);
      const { messages } = await t.ph.inbox.getThread(owner.id, thread!.id);
      const file = await t.ph.inbox.getAttachment(owner.id, messages[0]!.attachments[0]!.id);
      expect(file).toMatchObject({ filename: '../../evil.sh', contentType: 'text/plain' });
      expect(Buffer.from(file.bytes).toString()).toBe('x');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('file stores refuse keys that are not generated names', async () => {
    for (const files of [memoryFiles(), directoryFiles(join(tmpdir(), 'ph-never-created'))]) {
      await expect(files.put('../x', new Uint8Array(), { contentType: 'text/plain' })).rejects.toThrow();
      await expect(files.get('/etc/passwd')).rejects.toThrow();
      expect(await files.get('absent')).toBeNull();
    }
  });
});

describe('inbox API: replies', () => {
  let fake: FakeMailProvider;
  beforeAll(async () => {
    fake = await FakeMailProvider.start();
  });
  afterAll(() => fake.close());

  /** An inbound email the provider knows: the webhook carries metadata, the API the rest. */
  const arrive = (
    t: ReturnType<typeof setup>,
    data: {
      from: string;
      subject: string;
      message_id?: string;
      text?: string;
      headers?: Record<string, string>;
    },
  ) => {
    const emailId = randomUUID();
    fake.emails.set(emailId, {
      text: data.text ?? 'text',
      headers: data.headers ?? {},
      message_id: data.message_id,
    });
    return t.deliver('inbound', received({ email_id: emailId, from: data.from, subject: data.subject }));
  };

  it.each([
    '<q-0@customer.test>',
    // Old-style phrases and comments beside the id carry no ids (RFC 5322 4.5.4).
    'Your message of "Mon, 1 Jan 2024 10:00:00 +0000" <q-0@customer.test>',
    `<q-0@customer.test> (Ann's message of "Mon, 1 Jan 2024 10:00:00 +0000 (UTC)")`,
  ])(
    "references the parent's In-Reply-To %j when the parent has no References (RFC 5322 3.6.4)",
    async (inReplyTo) => {
      const { t, owner, account } = await world({ provider: fake.config() });
      await arrive(t, {
        from: 'ann@customer.test',
        subject: 'Follow-up',
        message_id: '<q-2@customer.test>',
        headers: { 'In-Reply-To': inReplyTo },
      });
      const thread = await newestThread(t, owner, account);
      await t.ph.inbox.reply(owner.id, thread!.id, { text: 'Noted.' });
      expect(fake.sent.at(-1)!.body).toMatchObject({
        headers: {
          'In-Reply-To': '<q-2@customer.test>',
          References: '<q-0@customer.test> <q-2@customer.test>',
        },
      });
    },
  );

  it('sends on only ids a header can carry, and keeps encoded words in the subject literal', async () => {
    const { t, owner, account } = await world({ provider: fake.config() });
    await arrive(t, {
      from: 'ann@customer.test',
      subject: '=?UTF-8?Q?Hi=0D=0ABcc:_x@evil.test?=',
      message_id: '<\u00fc-id@customer.test>',
      headers: { References: '<ok-1@customer.test> <odd\u202e@customer.test> <a"b@customer.test>' },
    });
    const thread = await newestThread(t, owner, account);
    await t.ph.inbox.reply(owner.id, thread!.id, { text: 'Noted.' });
    const sent = fake.sent.at(-1)!.body as { subject: string; headers: Record<string, string> };
    expect(sent.headers['In-Reply-To']).toBeUndefined();
    expect(sent.headers.References).toBe('<ok-1@customer.test>');
    // A word joiner after `=`: not an encoded word a mail client would decode into CR/LF.
    expect(sent.subject).toBe('Re: =\u2060?UTF-8?Q?Hi=0D=0ABcc:_x@evil.test?=');
  });

  it('sends through the provider with Message-ID, In-Reply-To and References, and threads the answer', async () => {
    const { t, owner, account } = await world({ provider: fake.config() });
    await arrive(t, {
      from: 'Ann <ann@customer.test>',
      subject: 'Question',
      message_id: '<q-1@customer.test>',
      text: 'How?',
      headers: { References: '<older@customer.test>' },
    });
    const thread = await newestThread(t, owner, account);
    t.clock.advance(1000);
    const reply = await t.ph.inbox.reply(owner.id, thread!.id, {
      text: 'Like this.',
      html: '<p>Like this.</p>',
    });
    const sent = fake.sent.at(-1)!;
    expect(sent.body).toMatchObject({
      from: '"Support" <support@acme.test>',
      to: ['ann@customer.test'],
      subject: 'Re: Question',
      text: 'Like this.',
      html: '<p>Like this.</p>',
      headers: {
        'Message-ID': `<${reply.messageId}>`,
        'In-Reply-To': '<q-1@customer.test>',
        References: '<older@customer.test> <q-1@customer.test>',
      },
    });
    expect(reply.messageId).toMatch(/^[0-9a-f-]{36}@acme\.test$/);
    expect(reply).toMatchObject({
      direction: 'outbound',
      providerMessageId: sent.id,
      status: 'queued',
      threadId: thread!.id,
      to: ['ann@customer.test'],
    });

    // The customer answers the reply: it threads by the provider id or the Message-ID.
    t.clock.advance(1000);
    await arrive(t, {
      from: 'ann@customer.test',
      subject: 'New words',
      headers: { 'In-Reply-To': `<${reply.messageId}>` },
    });
    const threads = (await t.ph.inbox.listThreads(owner.id, account.id)).threads;
    expect(threads).toEqual([expect.objectContaining({ id: thread!.id, messageCount: 3 })]);

    // Delivery events reach the stored reply.
    await t.deliver('delivery', { type: 'email.delivered', data: { email_id: sent.id } });
    const detail = await t.ph.inbox.getThread(owner.id, thread!.id);
    expect(detail.messages.map((m) => [m.direction, m.status])).toEqual([
      ['inbound', 'received'],
      ['outbound', 'delivered'],
      ['inbound', 'received'],
    ]);
  });

  it('answers to Reply-To when the sender set one, and strips CR/LF from every header part', async () => {
    const { t, owner, account } = await world({ provider: fake.config() });
    await t.ph.inbox.addMember(owner.id, account.id, { email: owner.email, role: 'owner' });
    await arrive(t, {
      from: 'x@customer.test',
      subject: 'Hi\r\nBcc: evil@x.test',
      headers: { 'Reply-To': 'Desk <desk@customer.test>' },
    });
    const thread = await newestThread(t, owner, account);
    await t.ph.inbox.reply(owner.id, thread!.id, { text: 'ok' });
    const sent = fake.sent.at(-1)!.body;
    expect(sent.to).toEqual(['desk@customer.test']);
    expect(sent.subject).toBe('Re: Hi Bcc: evil@x.test');
  });

  it('answers 503 unavailable when the provider refuses, and stores nothing', async () => {
    const { t, owner, account } = await world({ provider: fake.config() });
    await arrive(t, { from: 'a@customer.test', subject: 'Down' });
    const thread = await newestThread(t, owner, account);
    fake.fail(/^\/emails$/, { status: 500, times: 1 });
    expect(await problem(t.ph.inbox.reply(owner.id, thread!.id, { text: 'x' }))).toBe('unavailable');
    expect((await t.ph.inbox.getThread(owner.id, thread!.id)).messages).toHaveLength(1);
  });

  it('sends through the mailer when no provider is configured, with the Message-ID as provider id', async () => {
    const mails: Mail[] = [];
    const { t, owner, account } = await world({ mailer: { send: async (m) => void mails.push(m) } });
    await t.deliver(
      'inbound',
      received({ from: 'ann@customer.test', subject: 'Mailer', message_id: '<m@c.test>' }),
    );
    const thread = await newestThread(t, owner, account);
    const reply = await t.ph.inbox.reply(owner.id, thread!.id, { text: 'via SMTP' });
    expect(mails).toEqual([
      expect.objectContaining({
        to: 'ann@customer.test',
        subject: 'Re: Mailer',
        headers: expect.objectContaining({
          'Message-ID': `<${reply.messageId}>`,
          'In-Reply-To': '<m@c.test>',
        }),
      }),
    ]);
    expect(reply.providerMessageId).toBe(reply.messageId);
  });

  it('recordOutbound is idempotent per provider id and validates its input', async () => {
    const { t, account } = await world();
    const input = { accountId: account.id, providerMessageId: 'host-1', to: 'a@x.test', subject: 'S' };
    const a = await t.ph.inbox.recordOutbound(input);
    const b = await t.ph.inbox.recordOutbound(input);
    expect(b.id).toBe(a.id);
    expect(await problem(t.ph.inbox.recordOutbound({ ...input, accountId: 'nope' }))).toBe('not_found');
    expect(await problem(t.ph.inbox.recordOutbound({ ...input, threadId: 'nope' }))).toBe('not_found');
    expect(await problem(t.ph.inbox.recordOutbound({ ...input, providerMessageId: '' }))).toBe(
      'validation_failed',
    );
  });
});
