import { ConfigError, createKeyring, createPostern } from '@postern/core';
import { memoryStores } from '@postern/core/memory';
import { EVENT_RECEIVED, INBOUND_RECEIVED } from '@postern/core/webhook';
import { recordingLogger, TestClock } from '@postern/testkit';
import { describe, expect, it } from 'vitest';
import { createAuthArea } from '../src/auth/index.js';
import { createAuthServices } from '../src/auth/services.js';
import type { PosternBase } from '../src/context.js';
import { createInboxArea } from '../src/inbox/index.js';
import { createMfaArea } from '../src/mfa/index.js';
import { mfaSummary } from '../src/mfa/summary.js';

function base(): PosternBase {
  const clock = new TestClock(Date.UTC(2030, 0, 1));
  const { logger } = recordingLogger();
  return {
    options: { issuer: 'https://postern.test', audience: 'postern-test' },
    stores: memoryStores({ clock }),
    clock,
    logger,
    keyring: createKeyring({ issuer: 'https://postern.test', logger, clock }),
    mailer: { send: async () => {} },
    settings: { get: () => undefined },
  };
}

describe('wiring: each area from a typed dependency object', () => {
  it('the shared context is complete when made: sessions, passwords and throttle are there', () => {
    const { ctx } = createAuthServices(base());
    expect(typeof ctx.sessions.issue).toBe('function');
    expect(typeof ctx.passwords.verify).toBe('function');
    expect(typeof ctx.throttle.take).toBe('function');
  });

  it('the auth area cannot be built without the MFA gate, and takes the one it is given', async () => {
    const services = createAuthServices(base());
    // @ts-expect-error: the MFA gate is a required dependency of the auth area.
    void (() => createAuthArea({ ...services }));
    const mfa = createMfaArea({ ctx: services.ctx });
    const auth = createAuthArea({ ...services, mfa: mfa.gate });
    const address = `wiring-${Date.now()}@example.com`;
    await auth.api.signup({ name: 'Wiring', email: address, password: 'correct-horse-battery-staple-42' });
    const answer = await auth.api.login({ email: address, password: 'correct-horse-battery-staple-42' });
    expect(answer).toHaveProperty('accessToken');
    await services.close();
  });

  it('mfaSummary reads the MFA gate, with no context registered anywhere', async () => {
    await expect(mfaSummary({ methods: async () => ['totp'] }, 'u1')).resolves.toEqual({
      enabled: true,
      methods: ['totp'],
    });
    await expect(mfaSummary({ methods: async () => [] }, 'u1')).resolves.toEqual({
      enabled: false,
      methods: [],
    });
  });

  it('the inbox area returns its consumers and retention task; createPostern subscribes them', async () => {
    const { ctx } = createAuthServices(base());
    const inbox = createInboxArea({ ctx, deliveryAttempts: 10 });
    expect(inbox.subscriptions.map(([event]) => event)).toEqual([EVENT_RECEIVED, INBOUND_RECEIVED]);
    expect(inbox.retention).toHaveLength(1);
    await expect(inbox.retention[0]!()).resolves.toBe(0);

    const ph = createPostern({
      issuer: 'https://postern.test',
      audience: 'postern-test',
      logger: recordingLogger().logger,
    });
    for (const event of [EVENT_RECEIVED, INBOUND_RECEIVED]) {
      expect(() => ph.outbox.subscribe(event, async () => {})).toThrow(ConfigError);
    }
    await ph.close();
  });
});
