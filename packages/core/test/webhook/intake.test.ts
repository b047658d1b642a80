import type { NeutralRequest, Stores } from '@postern/core';
import { createPostern, StoreError } from '@postern/core';
import { memoryStores } from '@postern/core/memory';
import { recordingLogger, standardWebhookHeaders, TEST_WEBHOOK_SECRET, TestClock } from '@postern/testkit';
import { describe, expect, it } from 'vitest';

const BODY = '{"type":"email.received","data":{"to":["inbox@example.test"],"text":"SECRET-BODY-MARKER"}}';

type SecretSource = () => string | undefined | PromiseLike<string | undefined>;

function setup(opts: { stores?: Stores; secret?: SecretSource; bodyLimit?: number } = {}) {
  const clock = new TestClock();
  const { logger, lines: logs } = recordingLogger();
  let reads = 0;
  const secret = opts.secret ?? (() => TEST_WEBHOOK_SECRET);
  const ph = createPostern({
    issuer: 'https://postern.test',
    audience: 'test',
    clock,
    logger,
    stores: opts.stores ?? memoryStores({ clock }),
    bodyLimits: { webhook: opts.bodyLimit ?? 1024 },
    settings: {
      get(key) {
        reads += 1;
        return (key === 'inbox.mail.webhook-secret' ? secret() : undefined) as string | undefined;
      },
    },
  });
  const post = (body: string, headers: Record<string, string> = {}, path = '/inbox/webhook') => {
    const req: NeutralRequest = {
      method: 'POST',
      path,
      headers: { 'content-type': 'application/json', ...headers },
      body: Buffer.from(body),
      ip: '192.0.2.1',
    };
    return ph.handle(req);
  };
  const sign = (body: string) =>
    standardWebhookHeaders({
      secret: TEST_WEBHOOK_SECRET,
      body,
      timestamp: Math.floor(clock.now().getTime() / 1000),
    });
  return { ph, clock, logs, post, sign, reads: () => reads };
}

const problemCode = (body: unknown) => (JSON.parse(String(body)) as { code: string }).code;

describe('webhook intake (library level)', () => {
  it('never logs the body, the signature or the secret, whether it accepts or refuses', async () => {
    const { post, sign, logs } = setup();
    const headers = sign(BODY);
    expect((await post(BODY, headers))?.status).toBe(202);
    expect((await post(BODY, { ...headers, 'webhook-timestamp': '1' }))?.status).toBe(401);
    expect((await post('{"not":"an object"', sign('{"not":"an object"')))?.status).toBe(400);
    const text = JSON.stringify(logs);
    expect(logs.length).toBeGreaterThan(0);
    expect(text).not.toContain('SECRET-BODY-MARKER');
    expect(text).not.toContain('not":"an');
    expect(text).not.toContain(headers['webhook-signature']!.slice(3));
    expect(text).not.toContain(TEST_WEBHOOK_SECRET.slice(6));
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        fields: expect.objectContaining({
          event: 'webhook_rejected',
          reason: 'timestamp_out_of_tolerance',
          ip: '192.0.2.1',
        }),
      }),
    );
  });

  it('refuses an unsigned body before parsing it: invalid JSON without a signature is 401, not 400', async () => {
    const { post } = setup();
    const res = await post('{{{ not json');
    expect(res?.status).toBe(401);
    expect(problemCode(res?.body)).toBe('webhook_signature_invalid');
  });

  it('refuses a signed body nested deeper than 100 levels before parsing it (400, nothing published)', async () => {
    const { ph, post, sign, logs } = setup({ bodyLimit: 5 * 1024 * 1024 });
    // 2 million levels: JSON.parse alone held the event loop for 1.5 s on this.
    const deep = `{"type":"email.delivered","data":${'['.repeat(2_000_000)}${']'.repeat(2_000_000)}}`;
    const res = await post(deep, sign(deep));
    expect(res?.status).toBe(400);
    expect(problemCode(res?.body)).toBe('validation_failed');
    expect(logs).toContainEqual(
      expect.objectContaining({ fields: expect.objectContaining({ reason: 'nested_too_deep' }) }),
    );
    // Brackets inside strings (escaped quotes too) are text, not nesting; 100 levels pass.
    const fine = `{"type":"email.delivered","s":"\\"${'['.repeat(500)}","d":${'['.repeat(99)}${']'.repeat(99)}}`;
    expect((await post(fine, sign(fine)))?.status).toBe(202);
    const over = `{"d":${'['.repeat(100)}${']'.repeat(100)}}`;
    expect((await post(over, sign(over)))?.status).toBe(400);
    expect((await ph.outbox.stats()).pending).toBe(1);
  });

  it('checks the body limit before the secret, and reads the secret on every request', async () => {
    const { post, sign, reads } = setup();
    const big = JSON.stringify({ pad: 'x'.repeat(2000) });
    const res = await post(big, sign(big));
    expect(res?.status).toBe(413);
    expect(reads()).toBe(0);
    await post(BODY, sign(BODY));
    await post(BODY, sign(BODY));
    expect(reads()).toBe(2);
  });

  it('answers 503 unavailable with Retry-After, and no acknowledgement, when the outbox store is down', async () => {
    const clock = new TestClock();
    const stores = memoryStores({ clock });
    const down: Stores = {
      ...stores,
      outbox: {
        ...stores.outbox,
        publish: async () => {
          throw new StoreError('database restarting');
        },
      },
    };
    const { post, sign } = setup({ stores: down });
    const res = await post(BODY, sign(BODY));
    expect(res?.status).toBe(503);
    expect(problemCode(res?.body)).toBe('unavailable');
    expect(res?.headers['retry-after']).toBeDefined();
  });

  it('takes a rotated secret on the next request, without a restart', async () => {
    let secret: string | undefined;
    const { post, sign } = setup({ secret: () => secret });
    expect((await post(BODY, sign(BODY)))?.status).toBe(503);
    secret = TEST_WEBHOOK_SECRET;
    expect((await post(BODY, sign(BODY)))?.status).toBe(202);
    secret = 'whsec_c29tZXRoaW5nLWVsc2UtZW50aXJlbHktMzItYnl0ZXMh';
    expect((await post(BODY, sign(BODY)))?.status).toBe(401);
  });

  it('reads a plain settings object on every request: a changed or removed secret counts at once', async () => {
    const clock = new TestClock();
    const settings: Record<string, string | undefined> = { 'inbox.mail.webhook-secret': TEST_WEBHOOK_SECRET };
    const ph = createPostern({ issuer: 'https://postern.test', audience: 'test', clock, settings });
    const post = (secret: string) =>
      ph.handle({
        method: 'POST',
        path: '/inbox/webhook',
        headers: {
          'content-type': 'application/json',
          ...standardWebhookHeaders({
            secret,
            body: BODY,
            timestamp: Math.floor(clock.now().getTime() / 1000),
          }),
        },
        body: Buffer.from(BODY),
      });
    const next = 'whsec_c29tZXRoaW5nLWVsc2UtZW50aXJlbHktMzItYnl0ZXMh';
    expect((await post(TEST_WEBHOOK_SECRET))?.status).toBe(202);
    settings['inbox.mail.webhook-secret'] = next;
    expect((await post(TEST_WEBHOOK_SECRET))?.status).toBe(401);
    expect((await post(next))?.status).toBe(202);
    delete settings['inbox.mail.webhook-secret'];
    expect((await post(next))?.status).toBe(503);
    await ph.close();
  });

  it('reads a secret from an asynchronous settings port (promise or any thenable)', async () => {
    for (const secret of [
      async () => TEST_WEBHOOK_SECRET,
      // biome-ignore lint/suspicious/noThenProperty: a settings port may return any thenable
      () => ({ then: (resolve: (v: string) => void) => resolve(TEST_WEBHOOK_SECRET) }),
    ] as SecretSource[]) {
      const { post, sign } = setup({ secret });
      expect((await post(BODY, sign(BODY)))?.status).toBe(202);
    }
    const { post, sign } = setup({ secret: async () => undefined });
    expect((await post(BODY, sign(BODY)))?.status).toBe(503);
  });

  it('publishes the routed event name with the raw body as payload', async () => {
    const { ph, post, sign } = setup();
    const res = await post(BODY, sign(BODY));
    const { outboxEventId } = JSON.parse(String(res?.body)) as { outboxEventId: string };
    expect(await ph.outbox.get(outboxEventId)).toMatchObject({
      name: 'inbox.mail.webhook.inbound.received',
      payload: BODY,
      status: 'pending',
    });
  });
});
