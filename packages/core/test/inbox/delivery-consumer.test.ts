import { describe, expect, it } from 'vitest';
import { acceptedAt } from '../../src/inbox/payload.js';
import { resendFixture, setup } from './helpers.js';

const EMAIL_ID = '56761188-7520-42d8-8898-ff6fc54ce618';

async function outbound(t: ReturnType<typeof setup>, providerMessageId = EMAIL_ID) {
  const owner = await t.user();
  const account = await t.ph.inbox.createAccount(owner.id, {
    address: 'onboarding@resend.dev',
    name: 'Acme',
  });
  const message = await t.ph.inbox.recordOutbound({
    accountId: account.id,
    providerMessageId,
    to: 'delivered@resend.dev',
    subject: 'Sending this example',
    text: 'hi',
  });
  const read = async () =>
    (await t.ph.inbox.getThread(owner.id, message.threadId)).messages.find((m) => m.id === message.id)!;
  return { owner, account, message, read };
}

const event = (type: string, over: Record<string, unknown> = {}) => ({
  ...resendFixture(`email.${type}`),
  ...over,
});

describe('delivery consumer', () => {
  it.each([
    ['sent', 'sent'],
    ['delivered', 'delivered'],
    ['delivery_delayed', 'delayed'],
    ['bounced', 'bounced'],
    ['complained', 'complained'],
    ['failed', 'failed'],
  ])('maps the Resend email.%s fixture to status %s', async (type, status) => {
    const t = setup();
    const { read } = await outbound(t);
    expect(await t.deliver('delivery', event(type))).toEqual({ outcome: 'applied' });
    expect((await read()).status).toBe(status);
  });

  it('moves statuses forward only, whatever order the events arrive in', async () => {
    const t = setup();
    const { read } = await outbound(t);
    for (const [type, expected] of [
      ['delivered', 'delivered'],
      ['delivery_delayed', 'delivered'],
      ['sent', 'delivered'],
      ['bounced', 'bounced'],
      ['complained', 'bounced'],
      ['delivered', 'bounced'],
    ] as const) {
      await t.deliver('delivery', event(type));
      expect((await read()).status).toBe(expected);
    }
  });

  it('counts opens and clicks, keeps the first open time and never changes the status', async () => {
    const t = setup();
    const { read } = await outbound(t);
    await t.deliver('delivery', event('sent'));
    await t.deliver('delivery', event('opened', { created_at: '2026-02-23T10:00:00.000Z' }));
    await t.deliver('delivery', event('opened', { created_at: '2026-02-22T10:00:00.000Z' }));
    await t.deliver('delivery', event('clicked'));
    expect(await read()).toMatchObject({
      status: 'sent',
      openCount: 2,
      openedAt: '2026-02-22T10:00:00.000Z',
      clickCount: 1,
      clickedAt: '2024-11-22T23:41:12.126Z',
    });
    await t.deliver('delivery', event('bounced'));
    await t.deliver('delivery', event('opened'));
    expect((await read()).status).toBe('bounced');
  });

  it('dates an open without a usable time by when its webhook was accepted, not by a late retry', async () => {
    const t = setup();
    const { read } = await outbound(t);
    const accepted = t.clock.now();
    t.clock.advance(60 * 60_000);
    const opened = (created_at?: string) => ({
      type: 'email.opened',
      created_at,
      data: { email_id: EMAIL_ID },
    });
    await t.deliver('delivery', opened(), { createdAt: accepted, attempt: 5 });
    await t.deliver('delivery', opened('+010000-01-01T00:00:00Z'), { createdAt: accepted, attempt: 5 });
    expect(await read()).toMatchObject({ openCount: 2, openedAt: accepted.toISOString() });
  });

  it('takes an acceptance time only when a store can keep it (a re-queued event hands over a string)', () => {
    const clock = { now: () => new Date('2026-03-01T12:00:00Z') };
    const at = (createdAt: unknown) =>
      acceptedAt({ id: 'e', name: 'n', payload: '{}', attempt: 1, createdAt: createdAt as Date }, clock);
    expect(at(new Date('2026-02-01T00:00:00Z')).toISOString()).toBe('2026-02-01T00:00:00.000Z');
    expect(at('2026-02-01T00:00:00.000Z').toISOString()).toBe('2026-02-01T00:00:00.000Z');
    for (const bad of ['+275760-09-13T00:00:00.000Z', '1969-12-31T23:59:59Z', 'soon', null, undefined]) {
      expect(at(bad).toISOString(), String(bad)).toBe('2026-03-01T12:00:00.000Z');
    }
  });

  it('has one effect per outbox event, however often it is delivered', async () => {
    const t = setup();
    const { read } = await outbound(t);
    const payload = event('clicked');
    expect(await t.deliver('delivery', payload, { id: 'click-1' })).toEqual({ outcome: 'applied' });
    expect(await t.deliver('delivery', payload, { id: 'click-1', attempt: 2 })).toEqual({
      outcome: 'duplicate',
    });
    expect((await read()).clickCount).toBe(1);
  });

  it('stores every event as a mail_event, with its detail', async () => {
    const t = setup();
    await outbound(t);
    await t.deliver('delivery', event('bounced'), { id: 'b-1' });
    expect(await t.stores.mailEvents.findById('b-1')).toMatchObject({
      type: 'email.bounced',
      kind: 'status',
      status: 'bounced',
      providerMessageId: EMAIL_ID,
      occurredAt: new Date('2026-11-22T23:41:12.126Z'),
      detail: expect.stringContaining('suppression list'),
      appliedAt: expect.any(Date),
    });
  });

  it('keeps an event for an unknown message and applies it when the message is recorded', async () => {
    const t = setup();
    expect(
      await t.deliver('delivery', event('delivered', { data: { email_id: 'later-1' } }), { id: 'd-1' }),
    ).toEqual({ outcome: 'pending' });
    expect(await t.deliver('delivery', event('opened', { data: { email_id: 'later-1' } }))).toEqual({
      outcome: 'pending',
    });
    expect((await t.stores.mailEvents.findById('d-1'))?.appliedAt).toBeNull();
    const { read } = await outbound(t, 'later-1');
    expect(await read()).toMatchObject({ status: 'delivered', openCount: 1 });
    expect((await t.stores.mailEvents.findById('d-1'))?.appliedAt).toBeInstanceOf(Date);
    // A redelivery afterwards changes nothing.
    expect(
      await t.deliver('delivery', event('delivered', { data: { email_id: 'later-1' } }), { id: 'd-1' }),
    ).toEqual({ outcome: 'duplicate' });
  });

  it('accepts bare and prefixed type names and the `event` field', async () => {
    const t = setup();
    const { read } = await outbound(t);
    await t.deliver('delivery', { event: 'delivery_delayed', data: { email_id: EMAIL_ID } });
    expect((await read()).status).toBe('delayed');
    await t.deliver('delivery', { type: 'DELIVERED', data: { email_id: EMAIL_ID } });
    expect((await read()).status).toBe('delivered');
  });

  it('stores other event types without effect, and payloads without a message id for audit only', async () => {
    const t = setup();
    const { read } = await outbound(t);
    expect(await t.deliver('delivery', event('scheduled'), { id: 's-1' })).toEqual({ outcome: 'ignored' });
    expect(await t.stores.mailEvents.findById('s-1')).toMatchObject({ kind: 'other', status: null });
    expect((await read()).status).toBe('queued');
    // Every event is kept, also one that names no message: applied to nothing.
    const noId = { type: 'email.bounced', data: { bounce: { message: 'mailbox full' } } };
    expect(await t.deliver('delivery', noId, { id: 'n-1' })).toEqual({ outcome: 'invalid_payload' });
    expect(await t.stores.mailEvents.findById('n-1')).toMatchObject({
      type: 'email.bounced',
      kind: 'status',
      status: 'bounced',
      providerMessageId: null,
      detail: 'mailbox full',
      appliedAt: t.clock.now(),
    });
    const tooLong = { type: 'email.delivered', data: { email_id: 'x'.repeat(257) } };
    expect(await t.deliver('delivery', tooLong, { id: 'n-2' })).toEqual({ outcome: 'invalid_payload' });
    expect(await t.deliver('delivery', '{', { id: 'n-3' })).toEqual({ outcome: 'invalid_payload' });
    expect(await t.stores.mailEvents.findById('n-2')).toMatchObject({ providerMessageId: null });
    expect(await t.stores.mailEvents.findById('n-3')).toMatchObject({ type: 'unknown', kind: 'other' });
    expect((await read()).status).toBe('queued');
  });

  it('never touches inbound messages that share the provider id', async () => {
    const t = setup();
    const owner = await t.user();
    const account = await t.ph.inbox.createAccount(owner.id, { address: 'delivered@resend.dev', name: 'In' });
    await t.deliver('inbound', resendFixture('email.received'));
    await t.deliver('delivery', event('bounced'));
    const [thread] = (await t.ph.inbox.listThreads(owner.id, account.id)).threads;
    const { messages } = await t.ph.inbox.getThread(owner.id, thread!.id);
    expect(messages[0]!.status).toBe('received');
  });
});
