import { randomUUID } from 'node:crypto';
import type { Stores } from '@postern/core';
import { memoryStores } from '@postern/core/memory';
import { EVENT_RECEIVED, INBOUND_RECEIVED } from '@postern/core/webhook';
import * as installedReader from '@postern/inbox';
import { recordingLogger, TestClock } from '@postern/testkit';
import { describe, expect, it } from 'vitest';
import { createAuthServices } from '../../src/auth/services.js';
import { createInboxArea } from '../../src/inbox/index.js';
import { MailReaderMissing, mailReaderLoader } from '../../src/inbox/load-mail-reader.js';
import type { MailReader } from '../../src/inbox/mail-reader.js';
import { createOutbox } from '../../src/outbox/index.js';
import { createKeyring } from '../../src/tokens/keyring.js';
import { resendFixture } from './helpers.js';

/** What Node throws for `import('@postern/inbox')` when the package is not installed. */
const notInstalled = () =>
  Object.assign(
    new Error(
      "Cannot find package '@postern/inbox' imported from /app/node_modules/@postern/core/dist/index.js",
    ),
    { code: 'ERR_MODULE_NOT_FOUND' },
  );

/** The inbox area and outbox wired as `createPostern` wires them, on the stores given (a
 *  restarted process), with the mail reader's import handed in. */
function wire(shared: { stores: Stores; clock: TestClock }, load: () => Promise<MailReader>) {
  const log = recordingLogger();
  const { ctx } = createAuthServices({
    options: { issuer: 'https://postern.test', audience: 'test' },
    ...shared,
    logger: log.logger,
    keyring: createKeyring({ issuer: 'https://postern.test', logger: log.logger, clock: shared.clock }),
    mailer: { send: async () => {} },
    settings: { get: () => undefined },
  });
  let imports = 0;
  const inbox = createInboxArea({
    ctx,
    deliveryAttempts: 10,
    mailReader: mailReaderLoader(() => {
      imports++;
      return load();
    }),
  });
  const outbox = createOutbox(ctx, { retention: inbox.retention });
  for (const [name, consumer] of inbox.subscriptions) outbox.subscribe(name, consumer);
  return { log, inbox, outbox, imports: () => imports };
}

function shared() {
  const clock = new TestClock(Date.parse('2026-03-01T12:00:00Z'));
  return { clock, stores: memoryStores({ clock }) };
}

async function owner({ stores, clock }: ReturnType<typeof shared>) {
  const now = clock.now();
  return (await stores.users.create({
    id: randomUUID(),
    email: `${randomUUID()}@users.test`,
    name: 'Owner',
    passwordHash: 'unused',
    roles: ['user'],
    emailVerified: true,
    disabled: false,
    createdAt: now,
    passwordChangedAt: now,
  }))!;
}

const missing = async (): Promise<MailReader> => {
  throw notInstalled();
};
const installed = async (): Promise<MailReader> => installedReader;

const RAW = [
  'From: Ann <ann@customer.test>',
  'To: support@acme.test',
  'Subject: =?UTF-8?B?SGVsbG8gZnJvbSBNSU1F?=',
  'Message-ID: <missing-reader-1@customer.test>',
  'MIME-Version: 1.0',
  'Content-Type: text/html; charset=utf-8',
  '',
  '<p>Hello <b>there</b></p>',
].join('\r\n');

describe('inbound mail without @postern/inbox', () => {
  it('fails the delivery naming the package, logs that once, keeps the event until it is installed', async () => {
    const state = shared();
    const t = wire(state, missing);
    const user = await owner(state);
    const account = await t.inbox.api.createAccount(user.id, {
      address: 'support@acme.test',
      name: 'Support',
    });
    const id = await t.outbox.publish({
      name: INBOUND_RECEIVED,
      payload: JSON.stringify({ data: { raw: RAW } }),
    });

    await t.outbox.drain();
    const failed = await t.outbox.get(id);
    expect(failed).toMatchObject({ status: 'pending', attempts: 1 });
    expect(failed!.lastError).toContain('npm install @postern/inbox');
    state.clock.advance(3_600_000);
    await t.outbox.drain();
    expect(await t.outbox.get(id)).toMatchObject({ status: 'pending', attempts: 2 });
    const errors = t.log.lines.filter((l) => l.level === 'error');
    expect(errors).toEqual([
      {
        level: 'error',
        fields: { event: 'inbox_mail_reader_missing', outboxEventId: id, package: '@postern/inbox' },
        msg: new MailReaderMissing().message,
      },
    ]);
    // Node keeps a failed import too: one import, however many mails.
    expect(t.imports()).toBe(1);
    expect((await t.inbox.api.listThreads(user.id, account.id)).threads).toEqual([]);

    // Installed, and the process restarted: the next retry stores the mail.
    const restarted = wire(state, installed);
    state.clock.advance(3_600_000);
    await restarted.outbox.drain();
    expect(await restarted.outbox.get(id)).toMatchObject({ status: 'done', attempts: 3 });
    const [thread] = (await restarted.inbox.api.listThreads(user.id, account.id)).threads;
    const { messages } = await restarted.inbox.api.getThread(user.id, thread!.id);
    expect(messages[0]).toMatchObject({ subject: 'Hello from MIME', text: 'Hello there' });
  });

  it('delivery-status events need no mail reader', async () => {
    const state = shared();
    const t = wire(state, missing);
    const user = await owner(state);
    const account = await t.inbox.api.createAccount(user.id, {
      address: 'onboarding@resend.dev',
      name: 'Acme',
    });
    const sent = await t.inbox.api.recordOutbound({
      accountId: account.id,
      providerMessageId: '56761188-7520-42d8-8898-ff6fc54ce618',
      to: 'delivered@resend.dev',
      subject: 'Sending this example',
      text: 'hi',
    });
    const id = await t.outbox.publish({
      name: EVENT_RECEIVED,
      payload: JSON.stringify(resendFixture('email.delivered')),
    });
    await t.outbox.drain();
    expect(await t.outbox.get(id)).toMatchObject({ status: 'done' });
    const { messages } = await t.inbox.api.getThread(user.id, sent.threadId);
    expect(messages.find((m) => m.id === sent.id)).toMatchObject({ status: 'delivered' });
    expect(t.imports()).toBe(0);
  });
});

describe('mail reader loader', () => {
  it('imports once and keeps the reader', async () => {
    let imports = 0;
    const load = mailReaderLoader(async () => {
      imports++;
      return installedReader;
    });
    expect(await load()).toBe(await load());
    expect(imports).toBe(1);
  });

  it('a missing module the package imports is not the package missing: thrown as it came', async () => {
    const inner = Object.assign(
      new Error(
        "Cannot find package 'mailparser' imported from /app/node_modules/@postern/inbox/dist/index.js",
      ),
      { code: 'ERR_MODULE_NOT_FOUND' },
    );
    const load = mailReaderLoader(async (): Promise<MailReader> => {
      throw inner;
    });
    await expect(load()).rejects.toBe(inner);
    const cjs = mailReaderLoader(async (): Promise<MailReader> => {
      throw Object.assign(new Error("Cannot find module '@postern/inbox'\nRequire stack: ..."), {
        code: 'MODULE_NOT_FOUND',
      });
    });
    await expect(cjs()).rejects.toBeInstanceOf(MailReaderMissing);
  });
});
