import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  createPostern,
  type InboxNotice,
  type Notifier,
  type PosternOptions,
  silentLogger,
} from '@postern/core';
import { memoryStores } from '@postern/core/memory';
import { TestClock } from '@postern/testkit';

export const FIXTURES = new URL('../fixtures/', import.meta.url);

export function fixture(path: string): string {
  return readFileSync(new URL(path, FIXTURES), 'utf8');
}

export function resendFixture(name: string): Record<string, any> {
  return JSON.parse(fixture(`resend/${name}.json`));
}

/** A notifier that remembers what it was asked to send (and can be told to fail). */
export class RecordingNotifier implements Notifier {
  readonly sent: Array<{ notice: InboxNotice; key: string }> = [];
  failuresLeft = 0;
  async notify(notice: InboxNotice, key: string): Promise<void> {
    if (this.failuresLeft > 0) {
      this.failuresLeft -= 1;
      throw new Error('notifier down');
    }
    this.sent.push({ notice, key });
  }
}

/** A Postern on memory stores with a test clock and a recording notifier. */
export function setup(options: Partial<PosternOptions> = {}) {
  const clock = new TestClock(Date.parse('2026-03-01T12:00:00Z'));
  const stores = memoryStores({ clock });
  const notifier = new RecordingNotifier();
  const ph = createPostern({
    issuer: 'https://postern.test',
    audience: 'test',
    clock,
    stores,
    notifier,
    logger: silentLogger,
    ...options,
  });

  async function user(email = `${randomUUID()}@users.test`, { emailVerified = true } = {}) {
    const now = clock.now();
    const u = await stores.users.create({
      id: randomUUID(),
      email,
      name: email.split('@')[0]!,
      passwordHash: 'unused',
      roles: ['user'],
      emailVerified,
      disabled: false,
      createdAt: now,
      passwordChangedAt: now,
    });
    return u!;
  }

  let n = 0;
  /** Delivers a payload to a consumer as the outbox would. */
  const deliver = (
    consumer: 'inbound' | 'delivery',
    payload: unknown,
    opts: {
      id?: string;
      attempt?: number;
      maxAttempts?: number;
      createdAt?: Date;
      leaseEndsAt?: number;
      signal?: AbortSignal;
    } = {},
  ) =>
    ph.inbox.consumers[consumer]({
      id: opts.id ?? `evt-${++n}-${randomUUID()}`,
      name: consumer,
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
      attempt: opts.attempt ?? 1,
      maxAttempts: opts.maxAttempts,
      createdAt: opts.createdAt ?? clock.now(),
      leaseEndsAt: opts.leaseEndsAt,
      signal: opts.signal,
    });

  return { ph, clock, stores, notifier, user, deliver };
}

/** Resend's `email.received` payload for one recipient. */
export function received(data: Record<string, unknown>): Record<string, unknown> {
  return {
    type: 'email.received',
    created_at: '2026-03-01T12:00:00.000Z',
    data: {
      email_id: randomUUID(),
      from: 'Ann Sender <ann@customer.test>',
      to: ['support@acme.test'],
      cc: [],
      subject: 'Hello',
      attachments: [],
      ...data,
    },
  };
}
