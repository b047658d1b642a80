import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeMailProvider } from '../fake-provider.js';
import { expectProblem, expectSafeHeaders } from './expect.js';
import { type HttpContext, type HttpEnv, TEST_WEBHOOK_SECRET } from './harness.js';
import { expectJson, freshEmail, proveEmail, signUpAndLogIn } from './session.js';
import { standardWebhookHeaders } from './webhook-signing.js';

interface Person {
  id: string;
  email: string;
  token: string;
}

/** Signs up and logs in a fresh user over HTTP. */
async function person(ctx: HttpContext, tag: string): Promise<Person> {
  const { id, email, accessToken } = await signUpAndLogIn(ctx, {
    email: freshEmail(tag),
    name: 'Inbox Person',
  });
  return { id, email, token: accessToken };
}

/** A person whose address is proven (members added by email need one). */
async function provenPerson(ctx: HttpContext, tag: string): Promise<Person> {
  const p = await person(ctx, tag);
  await proveEmail(ctx, p.email, p.token);
  return p;
}

interface AccountBody {
  id: string;
  address: string;
  name: string;
  role: string;
}

async function createAccount(ctx: HttpContext, p: Person, address = `support-${randomUUID()}@acme.test`) {
  return expectJson<AccountBody>(
    await ctx.request('/inbox/accounts', { bearer: p.token, json: { address, name: 'Support' } }),
    201,
  );
}

/** Posts a signed webhook (Standard Webhooks headers) and drains the outbox. */
async function webhook(ctx: HttpContext, body: unknown, path = '/inbox/webhook') {
  const raw = JSON.stringify(body);
  const headers = standardWebhookHeaders({
    secret: TEST_WEBHOOK_SECRET,
    body: raw,
    timestamp: Math.floor(ctx.clock.now().getTime() / 1000),
  });
  const res = await ctx.request(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: raw,
  });
  const ack = await expectJson<{ accepted: boolean; outboxEventId: string }>(res, 202);
  await ctx.ph.outbox.drain();
  return ack;
}

const receivedEvent = (emailId: string, to: string, over: Record<string, unknown> = {}) => ({
  type: 'email.received',
  created_at: new Date().toISOString(),
  data: {
    email_id: emailId,
    from: 'Ann Customer <ann@customer.test>',
    to: [to],
    cc: [],
    subject: 'Broken widget',
    attachments: [],
    ...over,
  },
});

interface MessageBody {
  id: string;
  direction: string;
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string | null;
  status: string;
  openedAt: string | null;
  clickCount: number;
  providerMessageId: string;
  messageId: string | null;
  receivedAt: string;
  attachments: Array<{ id: string; filename: string; contentType: string; size: number }>;
}
interface ThreadDetailBody {
  thread: { id: string; accountId: string; subject: string };
  messages: MessageBody[];
}
interface ThreadListBody {
  threads: Array<{
    id: string;
    accountId: string;
    subject: string;
    lastMessageAt: string;
    messageCount: number;
  }>;
  nextCursor: string | null;
}

/** Inbox API and the consumers behind the webhook (delivery events, inbound mail), end to end. */
export function inboxScenarios(env: HttpEnv): void {
  describe('inbox API', () => {
    let ctx: HttpContext;
    let provider: FakeMailProvider;
    beforeAll(async () => {
      provider = await FakeMailProvider.start();
      ctx = await env.setup({ provider: provider.config() });
    });
    afterAll(async () => {
      await ctx.close();
      await provider.close();
    });

    it('every inbox route needs a Bearer token', async () => {
      for (const [method, path, body] of [
        ['GET', '/inbox/accounts'],
        ['POST', '/inbox/accounts', { address: 'a@acme.test', name: 'A' }],
        ['POST', '/inbox/accounts/x/members', { email: 'a@acme.test', role: 'member' }],
        ['GET', '/inbox/accounts/x/threads'],
        ['GET', '/inbox/threads/x'],
        ['GET', '/inbox/attachments/x'],
        ['POST', '/inbox/threads/x/reply', { text: 'hi' }],
      ] as const) {
        await expectProblem(await ctx.request(path, { method, json: body }), 401, 'invalid_token');
      }
    });

    it('refuses account names with control or direction-override characters, or nothing visible', async () => {
      const owner = await person(ctx, 'namer');
      for (const name of ['Support\r\nBcc: x', 'Invoice\u202egpj.exe', 'A\u0085B', '\u200b', 'x\udc00y'])
        await expectProblem(
          await ctx.request('/inbox/accounts', {
            bearer: owner.token,
            json: { address: `n-${randomUUID()}@acme.test`, name },
          }),
          400,
          'validation_failed',
        );
    });

    it('owners create accounts and add members; others get 403, unknown ids 404', async () => {
      const owner = await person(ctx, 'owner');
      const member = await provenPerson(ctx, 'member');
      const stranger = await person(ctx, 'stranger');
      const address = `Desk-${randomUUID()}@Acme.test`;
      const account = await createAccount(ctx, owner, address);
      expect(account).toMatchObject({
        id: expect.any(String),
        address: address.toLowerCase(),
        role: 'owner',
      });

      const added = await expectJson<{ member: { userId: string; role: string } }>(
        await ctx.request(`/inbox/accounts/${account.id}/members`, {
          bearer: owner.token,
          json: { email: member.email, role: 'member' },
        }),
        201,
      );
      expect(added.member).toMatchObject({ userId: member.id, role: 'member', pending: false });

      const mine = await expectJson<{ accounts: AccountBody[] }>(
        await ctx.request('/inbox/accounts', { bearer: member.token }),
        200,
      );
      expect(mine.accounts).toEqual([expect.objectContaining({ id: account.id, role: 'member' })]);
      expect(
        (
          await expectJson<{ accounts: AccountBody[] }>(
            await ctx.request('/inbox/accounts', { bearer: stranger.token }),
            200,
          )
        ).accounts,
      ).toEqual([]);

      const addByMember = await ctx.request(`/inbox/accounts/${account.id}/members`, {
        bearer: member.token,
        json: { email: stranger.email, role: 'owner' },
      });
      await expectProblem(addByMember, 403, 'forbidden');
      // Access is checked before the body: a member learns nothing from a field error.
      await expectProblem(
        await ctx.request(`/inbox/accounts/${account.id}/members`, {
          bearer: member.token,
          json: { email: 'not an email', role: 'admin' },
        }),
        403,
        'forbidden',
      );
      await expectProblem(
        await ctx.request(`/inbox/accounts/${account.id}/threads`, { bearer: stranger.token }),
        403,
        'forbidden',
      );
      await expectProblem(
        await ctx.request(`/inbox/accounts/${randomUUID()}/threads`, { bearer: owner.token }),
        404,
        'not_found',
      );
      await expectProblem(
        await ctx.request(`/inbox/threads/${randomUUID()}`, { bearer: owner.token }),
        404,
        'not_found',
      );
      await expectProblem(
        await ctx.request(`/inbox/attachments/${randomUUID()}`, { bearer: owner.token }),
        404,
        'not_found',
      );
      await expectProblem(
        await ctx.request('/inbox/accounts', { bearer: owner.token, json: { address, name: 'x', extra: 1 } }),
        400,
        'validation_failed',
      );
      await expectProblem(
        await ctx.request(`/inbox/accounts/${account.id}/threads?cursor=nonsense`, { bearer: owner.token }),
        400,
        'validation_failed',
      );
    });

    it('a member added by an address nobody proved is pending (403) until its owner proves it', async () => {
      const owner = await person(ctx, 'payroll-owner');
      const account = await createAccount(ctx, owner);
      const emailId = randomUUID();
      provider.emails.set(emailId, { html: null, text: 'Salaries attached', headers: {}, attachments: [] });
      await webhook(ctx, receivedEvent(emailId, account.address));
      // bob@ was registered by whoever got there first, and never proven.
      const bob = await person(ctx, 'bob');
      const added = await expectJson<{ member: { userId: string; pending: boolean } }>(
        await ctx.request(`/inbox/accounts/${account.id}/members`, {
          bearer: owner.token,
          json: { email: bob.email, role: 'member' },
        }),
        201,
      );
      expect(added.member).toMatchObject({ userId: bob.id, pending: true });
      await expectProblem(
        await ctx.request(`/inbox/accounts/${account.id}/threads`, { bearer: bob.token }),
        403,
        'forbidden',
      );
      expect(
        (
          await expectJson<{ accounts: AccountBody[] }>(
            await ctx.request('/inbox/accounts', { bearer: bob.token }),
            200,
          )
        ).accounts,
      ).toEqual([]);
      const members = () =>
        ctx
          .request(`/inbox/accounts/${account.id}/members`, { bearer: owner.token })
          .then((r) =>
            expectJson<{ members: Array<{ userId: string; role: string; pending: boolean }> }>(r, 200),
          );
      expect((await members()).members).toEqual([
        expect.objectContaining({ userId: owner.id, role: 'owner', pending: false }),
        expect.objectContaining({ userId: bob.id, role: 'member', pending: true }),
      ]);
      await expectProblem(
        await ctx.request(`/inbox/accounts/${account.id}/members`, { bearer: bob.token }),
        403,
        'forbidden',
      );

      await proveEmail(ctx, bob.email, bob.token);
      const list = await expectJson<ThreadListBody>(
        await ctx.request(`/inbox/accounts/${account.id}/threads`, { bearer: bob.token }),
        200,
      );
      expect(list.threads).toHaveLength(1);
      expect((await members()).members.map((m) => m.pending)).toEqual([false, false]);
    });

    it("a +tag of another user's address cannot be claimed, and its mail reaches the base account", async () => {
      const a = await person(ctx, 'sales-owner');
      const b = await person(ctx, 'squatter');
      const sales = await createAccount(ctx, a, `sales-${randomUUID()}@acme.test`);
      const [local, domain] = sales.address.split('@');
      const tagged = `${local}+orders@${domain}`;
      await expectProblem(
        await ctx.request('/inbox/accounts', { bearer: b.token, json: { address: tagged, name: 'Orders' } }),
        403,
        'forbidden',
      );
      const emailId = randomUUID();
      provider.emails.set(emailId, { html: null, text: 'Order 7', headers: {}, attachments: [] });
      await webhook(ctx, receivedEvent(emailId, tagged));
      const list = await expectJson<ThreadListBody>(
        await ctx.request(`/inbox/accounts/${sales.id}/threads`, { bearer: a.token }),
        200,
      );
      expect(list.threads).toHaveLength(1);
      // The base's owner may claim it.
      expect((await createAccount(ctx, a, tagged)).address).toBe(tagged);
    });

    it('limits emails without a user when adding members (member:user): no free oracle of registered emails', async () => {
      const owner = await person(ctx, 'prober');
      const known = await person(ctx, 'probed');
      const account = await createAccount(ctx, owner);
      const add = (email: string) =>
        ctx.request(`/inbox/accounts/${account.id}/members`, {
          bearer: owner.token,
          json: { email, role: 'member' },
        });
      // Found users are not counted: adding and re-adding a member costs nothing.
      for (let i = 0; i < 3; i++) expect((await add(known.email)).status).toBe(i === 0 ? 201 : 200);
      for (let i = 0; i < 20; i++) await expectProblem(await add(freshEmail('nobody')), 404, 'not_found');
      const refused = await add(freshEmail('nobody'));
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      await expectProblem(refused, 429, 'rate_limited');
      // Over the limit the answer no longer depends on the email.
      await expectProblem(await add(known.email), 429, 'rate_limited');
    });

    it('limits inbox accounts created (10 a day) and replies sent (30 per 15 min) per user, with Retry-After', async () => {
      const busy = await person(ctx, 'busy');
      for (let i = 0; i < 10; i++) await createAccount(ctx, busy);
      const refused = await ctx.request('/inbox/accounts', {
        bearer: busy.token,
        json: { address: `more-${randomUUID()}@acme.test`, name: 'More' },
      });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      await expectProblem(refused, 429, 'rate_limited');
      // Per user: someone else still creates theirs.
      const other = await person(ctx, 'busy-other');
      const account = await createAccount(ctx, other);

      const emailId = randomUUID();
      provider.emails.set(emailId, { html: null, text: 'Hello?', headers: {}, attachments: [] });
      await webhook(ctx, receivedEvent(emailId, account.address));
      const list = await expectJson<ThreadListBody>(
        await ctx.request(`/inbox/accounts/${account.id}/threads`, { bearer: other.token }),
        200,
      );
      const reply = () =>
        ctx.request(`/inbox/threads/${list.threads[0]!.id}/reply`, {
          bearer: other.token,
          json: { text: 'On it.' },
        });
      for (let i = 0; i < 30; i++) expect((await reply()).status).toBe(201);
      const tooMany = await reply();
      expect(Number(tooMany.headers.get('retry-after'))).toBeGreaterThan(0);
      await expectProblem(tooMany, 429, 'rate_limited');
    });

    it('webhook -> outbox -> thread visible -> reply -> inbound reply threads on -> delivery updates it', async () => {
      const owner = await person(ctx, 'flow');
      const stranger = await person(ctx, 'flow-stranger');
      const account = await createAccount(ctx, owner);

      // 1. Inbound mail: metadata in the webhook, body and attachment from the provider API.
      const emailId = randomUUID();
      provider.emails.set(emailId, {
        html: '<p>My widget <b>broke</b>.</p><script>alert(1)</script>',
        text: null,
        headers: { 'message-id': '<q-1@customer.test>' },
        message_id: '<q-1@customer.test>',
        attachments: [
          {
            id: 'att-1',
            filename: 'photo "1".html',
            contentType: 'text/html',
            bytes: Buffer.from('<script>alert(document.cookie)</script>'),
          },
        ],
      });
      await webhook(ctx, receivedEvent(emailId, account.address));
      const notice = await ctx.mail.waitFor(owner.email, (m) =>
        m.subject.startsWith('New message in Support'),
      );
      expect(notice.subject).toBe('New message in Support: Broken widget');

      // 2. The thread is visible to the owner, with its message and attachment metadata.
      const list = await expectJson<ThreadListBody>(
        await ctx.request(`/inbox/accounts/${account.id}/threads`, { bearer: owner.token }),
        200,
      );
      expect(list).toEqual({
        threads: [
          {
            id: expect.any(String),
            accountId: account.id,
            subject: 'Broken widget',
            lastMessageAt: expect.any(String),
            messageCount: 1,
          },
        ],
        nextCursor: null,
      });
      const threadId = list.threads[0]!.id;
      const detail = await expectJson<ThreadDetailBody>(
        await ctx.request(`/inbox/threads/${threadId}`, { bearer: owner.token }),
        200,
      );
      expect(detail.thread).toMatchObject({ id: threadId, accountId: account.id, subject: 'Broken widget' });
      const inbound = detail.messages[0]!;
      expect(inbound).toMatchObject({
        direction: 'inbound',
        from: 'Ann Customer <ann@customer.test>',
        to: [account.address],
        cc: [],
        subject: 'Broken widget',
        text: 'My widget broke.',
        html: '<p>My widget <b>broke</b>.</p><script>alert(1)</script>',
        status: 'received',
        openedAt: null,
        clickCount: 0,
        providerMessageId: emailId,
        messageId: 'q-1@customer.test',
        receivedAt: expect.any(String),
        attachments: [
          { id: expect.any(String), filename: 'photo "1".html', contentType: 'text/html', size: 39 },
        ],
      });
      await expectProblem(
        await ctx.request(`/inbox/threads/${threadId}`, { bearer: stranger.token }),
        403,
        'forbidden',
      );

      // 3. The attachment downloads as an attachment, never rendered at this origin.
      const attachmentPath = `/inbox/attachments/${inbound.attachments[0]!.id}`;
      await expectProblem(await ctx.request(attachmentPath, { bearer: stranger.token }), 403, 'forbidden');
      const file = await ctx.request(attachmentPath, { bearer: owner.token });
      expect(file.status).toBe(200);
      expectSafeHeaders(file);
      expect(file.headers.get('content-type')).toBe('text/html');
      expect(file.headers.get('content-disposition')).toBe(
        `attachment; filename="photo _1_.html"; filename*=UTF-8''photo%20%221%22.html`,
      );
      expect(file.headers.get('content-security-policy')).toMatch(/\bsandbox\b/);
      expect(await file.text()).toBe('<script>alert(document.cookie)</script>');

      // 4. Reply: through the provider, with Postern's Message-ID and the thread headers.
      ctx.clock.advance(1000);
      const { message: reply } = await expectJson<{ message: MessageBody }>(
        await ctx.request(`/inbox/threads/${threadId}/reply`, {
          bearer: owner.token,
          json: { text: 'Sorry! A new one is on its way.' },
        }),
        201,
      );
      const sent = provider.sent.at(-1)!;
      expect(sent.body).toMatchObject({
        to: ['ann@customer.test'],
        subject: 'Re: Broken widget',
        text: 'Sorry! A new one is on its way.',
        headers: {
          'Message-ID': `<${reply.messageId}>`,
          'In-Reply-To': '<q-1@customer.test>',
          References: '<q-1@customer.test>',
        },
      });
      expect(reply).toMatchObject({
        direction: 'outbound',
        providerMessageId: sent.id,
        subject: 'Re: Broken widget',
      });
      await expectProblem(
        await ctx.request(`/inbox/threads/${threadId}/reply`, {
          bearer: stranger.token,
          json: { text: 'x' },
        }),
        403,
        'forbidden',
      );
      await expectProblem(
        await ctx.request(`/inbox/threads/${threadId}/reply`, { bearer: stranger.token, json: { html: 1 } }),
        403,
        'forbidden',
      );

      // 5. The customer answers: In-Reply-To names our Message-ID, the subject changed.
      ctx.clock.advance(1000);
      const answerId = randomUUID();
      provider.emails.set(answerId, {
        text: 'Thanks!',
        headers: {
          'In-Reply-To': `<${reply.messageId}>`,
          References: `<q-1@customer.test> <${reply.messageId}>`,
        },
        message_id: '<q-2@customer.test>',
      });
      await webhook(
        ctx,
        receivedEvent(answerId, account.address, { subject: 'Thanks' }),
        '/inbox/webhook/inbound',
      );

      // 6. Delivery events for the reply update its status; engagement never lowers it.
      await webhook(ctx, {
        type: 'email.delivered',
        created_at: new Date().toISOString(),
        data: { email_id: sent.id },
      });
      await webhook(
        ctx,
        { type: 'email.opened', created_at: '2026-01-01T00:00:00.000Z', data: { email_id: sent.id } },
        '/inbox/webhook/events',
      );
      await webhook(
        ctx,
        { type: 'email.delivery_delayed', data: { email_id: sent.id } },
        '/inbox/webhook/events',
      );

      const after = await expectJson<ThreadDetailBody>(
        await ctx.request(`/inbox/threads/${threadId}`, { bearer: owner.token }),
        200,
      );
      expect(after.messages.map((m) => [m.direction, m.status, m.text])).toEqual([
        ['inbound', 'received', 'My widget broke.'],
        ['outbound', 'delivered', 'Sorry! A new one is on its way.'],
        ['inbound', 'received', 'Thanks!'],
      ]);
      expect(after.messages[1]!.openedAt).toBe('2026-01-01T00:00:00.000Z');
      const threads = await expectJson<ThreadListBody>(
        await ctx.request(`/inbox/accounts/${account.id}/threads`, { bearer: owner.token }),
        200,
      );
      expect(threads.threads).toEqual([expect.objectContaining({ id: threadId, messageCount: 3 })]);
    });

    it('a redelivered inbound webhook stores one message and sends one notification', async () => {
      const owner = await person(ctx, 'dedupe');
      const account = await createAccount(ctx, owner);
      const emailId = randomUUID();
      provider.emails.set(emailId, { text: 'once' });
      await webhook(ctx, receivedEvent(emailId, account.address, { subject: 'Once only' }));
      await webhook(ctx, receivedEvent(emailId, account.address, { subject: 'Once only' }));
      const list = await expectJson<ThreadListBody>(
        await ctx.request(`/inbox/accounts/${account.id}/threads`, { bearer: owner.token }),
        200,
      );
      expect(list.threads.map((t) => t.messageCount)).toEqual([1]);
      await ctx.mail.waitFor(owner.email, (m) => m.subject.includes('Once only'));
      expect(ctx.mail.to(owner.email).filter((m) => m.subject.includes('Once only'))).toHaveLength(1);
    });

    it('serves attachments whose names are not well-formed Unicode (lone surrogates, a pair cut at 255)', async () => {
      const owner = await person(ctx, 'surrogates');
      const account = await createAccount(ctx, owner);
      const emailId = randomUUID();
      const cut = `${'a'.repeat(254)}\u{1F600}.pdf`;
      provider.emails.set(emailId, {
        text: 'from the provider',
        attachments: [
          {
            id: 'a1',
            filename: 'inv\ud800oice.pdf',
            contentType: 'application/pdf',
            bytes: Buffer.from('one'),
          },
          { id: 'a2', filename: cut, contentType: 'application/pdf', bytes: Buffer.from('two') },
        ],
      });
      await webhook(ctx, receivedEvent(emailId, account.address, { subject: 'Surrogates \udc00 here' }));
      // No email_id: body and inline attachments from the payload itself.
      await webhook(ctx, {
        type: 'email.received',
        data: {
          from: 'ann@customer.test',
          to: [account.address],
          subject: 'Inline \ud83d',
          text: 'from the payload',
          attachments: [
            {
              filename: 'x\udc00y.txt',
              content: Buffer.from('three').toString('base64'),
              content_type: 'text/plain',
            },
          ],
        },
      });
      const list = await expectJson<ThreadListBody>(
        await ctx.request(`/inbox/accounts/${account.id}/threads`, { bearer: owner.token }),
        200,
      );
      expect(list.threads).toHaveLength(2);
      const bodies: string[] = [];
      for (const t of list.threads) {
        expect(t.subject).not.toMatch(/\p{Cs}/u);
        const detail = await expectJson<ThreadDetailBody>(
          await ctx.request(`/inbox/threads/${t.id}`, { bearer: owner.token }),
          200,
        );
        for (const a of detail.messages.flatMap((m) => m.attachments)) {
          expect(a.filename).not.toMatch(/\p{Cs}/u);
          const file = await ctx.request(`/inbox/attachments/${a.id}`, { bearer: owner.token });
          expect(file.status, a.filename).toBe(200);
          expect(file.headers.get('content-disposition')).toMatch(
            /^attachment; filename="[^"]*"; filename\*=UTF-8''/,
          );
          bodies.push(await file.text());
        }
      }
      expect(bodies.sort()).toEqual(['one', 'three', 'two']);
    });

    it('dates a delivery event from a year no database stores by its arrival, and keeps it', async () => {
      const { outboxEventId } = await webhook(ctx, {
        type: 'email.delivered',
        created_at: '-271821-04-20T00:00:00Z',
        data: { email_id: `unknown-${randomUUID()}` },
      });
      // Finished at the first attempt (kept, waiting for its message), not retried until dead.
      expect(await ctx.ph.outbox.get(outboxEventId)).toMatchObject({
        status: 'done',
        outcome: 'pending',
        attempts: 1,
      });
    });

    it('lists threads and messages of one instant in arrival order (a stopped clock)', async () => {
      const owner = await person(ctx, 'instant');
      const account = await createAccount(ctx, owner);
      // The harness clock stands still: every mail below arrives in the same millisecond.
      const mail = async (subject: string, text: string, messageId: string) => {
        const emailId = randomUUID();
        provider.emails.set(emailId, { text, headers: { 'message-id': messageId }, message_id: messageId });
        await webhook(ctx, receivedEvent(emailId, account.address, { subject, message_id: messageId }));
      };
      const id = (tag: string) => `<${tag}-${randomUUID()}@customer.test>`;
      await mail('Instant topic A', 'a1', id('a1'));
      await mail('Instant topic B', 'b1', id('b1'));
      await mail('Instant topic C', 'c1', id('c1'));
      await mail('Re: Instant topic A', 'a2', id('a2'));
      const last = id('a3');
      await mail('Re: Instant topic A', 'a3', last);

      const list = await expectJson<ThreadListBody>(
        await ctx.request(`/inbox/accounts/${account.id}/threads`, { bearer: owner.token }),
        200,
      );
      expect(list.threads.map((t) => t.subject)).toEqual([
        'Instant topic A',
        'Instant topic C',
        'Instant topic B',
      ]);
      const threadId = list.threads[0]!.id;
      const reply = async (text: string) =>
        (
          await expectJson<{ message: MessageBody }>(
            await ctx.request(`/inbox/threads/${threadId}/reply`, { bearer: owner.token, json: { text } }),
            201,
          )
        ).message;
      const r1 = await reply('r1');
      expect(provider.sent.at(-1)!.body).toMatchObject({ headers: { 'In-Reply-To': last } });
      // A mail that came without a Message-ID: the reply cites the newest message that has one.
      const bare = randomUUID();
      provider.emails.set(bare, { text: 'a4' });
      await webhook(ctx, receivedEvent(bare, account.address, { subject: 'Re: Instant topic A' }));
      await reply('r2');
      expect(provider.sent.at(-1)!.body).toMatchObject({
        to: ['ann@customer.test'],
        headers: { 'In-Reply-To': `<${r1.messageId}>` },
      });
      const detail = await expectJson<ThreadDetailBody>(
        await ctx.request(`/inbox/threads/${threadId}`, { bearer: owner.token }),
        200,
      );
      expect(detail.messages.map((m) => m.text)).toEqual(['a1', 'a2', 'a3', 'r1', 'a4', 'r2']);
    });

    it('pages threads newest first through nextCursor', async () => {
      const owner = await person(ctx, 'pages');
      const account = await createAccount(ctx, owner);
      for (let i = 0; i < 5; i++) {
        const emailId = randomUUID();
        provider.emails.set(emailId, { text: `n${i}` });
        await webhook(ctx, receivedEvent(emailId, account.address, { subject: `Page topic ${i}` }));
        ctx.clock.advance(1000);
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
        const page: ThreadListBody = await expectJson<ThreadListBody>(
          await ctx.request(`/inbox/accounts/${account.id}/threads?limit=2${q}`, { bearer: owner.token }),
          200,
        );
        expect(page.threads.length).toBeLessThanOrEqual(2);
        seen.push(...page.threads.map((t) => t.subject));
        cursor = page.nextCursor;
      } while (cursor);
      expect(seen).toEqual(['Page topic 4', 'Page topic 3', 'Page topic 2', 'Page topic 1', 'Page topic 0']);
    });
  });
}
