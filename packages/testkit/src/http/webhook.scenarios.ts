import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, expectSafeHeaders } from './expect.js';
import { type HttpContext, type HttpEnv, TEST_WEBHOOK_SECRET } from './harness.js';
import { standardWebhookHeaders, xMailHeaders } from './webhook-signing.js';

const EVENT = 'inbox.mail.webhook.event.received';
const INBOUND = 'inbox.mail.webhook.inbound.received';
const BASE = '/inbox/webhook';
const ROUTES = [BASE, `${BASE}/events`, `${BASE}/inbound`];
const MiB = 1024 * 1024;

/** Shaped like Resend's documented payloads (fixtures/resend). */
const delivered = {
  type: 'email.delivered',
  created_at: '2026-02-22T23:41:12.126Z',
  data: {
    email_id: '56761188-7520-42d8-8898-ff6fc54ce618',
    message_id: '<111-222-333@email.example.com>',
    from: 'Acme <onboarding@resend.dev>',
    to: ['delivered@resend.dev'],
    subject: 'Sending this example',
  },
};
const received = {
  type: 'email.received',
  created_at: '2026-02-22T23:41:12.126Z',
  data: {
    email_id: '56761188-7520-42d8-8898-ff6fc54ce618',
    from: 'onboarding@resend.dev',
    to: ['delivered@resend.dev'],
    message_id: '<111-222-333@email.example.com>',
    subject: 'Sending this example',
    attachments: [],
  },
};

const seconds = (ctx: HttpContext) => Math.floor(ctx.clock.now().getTime() / 1000);

async function post(
  ctx: HttpContext,
  path: string,
  body: string | Uint8Array,
  headers: Record<string, string>,
) {
  return ctx.request(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: body as RequestInit['body'],
  });
}

/** Signs `body` (Standard Webhooks headers) at the server's clock and posts it. */
async function send(
  ctx: HttpContext,
  path: string,
  body: string,
  opts: { id?: string; secret?: string } = {},
) {
  const headers = standardWebhookHeaders({
    secret: opts.secret ?? TEST_WEBHOOK_SECRET,
    body,
    timestamp: seconds(ctx),
    ...(opts.id === undefined ? {} : { id: opts.id }),
  });
  return post(ctx, path, body, headers);
}

async function accepted(res: Response): Promise<string> {
  const text = await res.text();
  expect({ status: res.status, body: text.slice(0, 300) }).toMatchObject({ status: 202 });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = JSON.parse(text) as { accepted: unknown; outboxEventId: unknown };
  expect(body).toEqual({ accepted: true, outboxEventId: expect.any(String) });
  return body.outboxEventId as string;
}

const total = async (ctx: HttpContext) => {
  const s = await ctx.ph.outbox.stats();
  return s.pending + s.done + s.dead;
};

/** Webhook intake over HTTP: secrets, signatures, ordering of the checks, routing, redelivery. */
export function webhookScenarios(env: HttpEnv): void {
  describe('webhook intake', () => {
    describe('with a secret configured', () => {
      let ctx: HttpContext;
      beforeAll(async () => {
        ctx = await env.setup();
      });
      afterAll(() => ctx?.close());

      it('answers 202 { accepted, outboxEventId } on each route and stores the exact raw body', async () => {
        for (const path of ROUTES) {
          const body = ` {"type" : "email.delivered",\n "data":{"note":"é \\u2028 ✓"}}\n`;
          const res = await send(ctx, path, body);
          expectSafeHeaders(res);
          const id = await accepted(res);
          const event = await ctx.ph.outbox.get(id);
          expect(event?.payload).toBe(body);
        }
      });

      it('routes the unified route by payload, and the other two routes by path', async () => {
        const nameOf = async (path: string, payload: object) =>
          (await ctx.ph.outbox.get(await accepted(await send(ctx, path, JSON.stringify(payload)))))?.name;
        expect(await nameOf(BASE, received)).toBe(INBOUND);
        expect(await nameOf(BASE, delivered)).toBe(EVENT);
        expect(await nameOf(BASE, { type: 'bounced', data: { to: ['x@example.test'] } })).toBe(EVENT);
        expect(await nameOf(BASE, { data: { subject: 'Hello' } })).toBe(INBOUND);
        expect(await nameOf(BASE, { type: 'custom.thing' })).toBe(EVENT);
        expect(await nameOf(BASE, { hello: 'world' })).toBe(INBOUND);
        expect(await nameOf(`${BASE}/events`, received)).toBe(EVENT);
        expect(await nameOf(`${BASE}/inbound`, delivered)).toBe(INBOUND);
      });

      it('accepts svix-* headers and x-mail-* signatures in hex or base64 with any allowed prefix', async () => {
        const body = JSON.stringify(delivered);
        const now = seconds(ctx);
        await accepted(
          await post(
            ctx,
            BASE,
            body,
            standardWebhookHeaders({ secret: TEST_WEBHOOK_SECRET, body, timestamp: now, prefix: 'svix' }),
          ),
        );
        await accepted(
          await post(
            ctx,
            BASE,
            body,
            standardWebhookHeaders({ secret: TEST_WEBHOOK_SECRET, body, timestamp: now, encoding: 'hex' }),
          ),
        );
        let t = now - 3;
        for (const prefix of ['', 'sha256=', 'v1,'] as const) {
          for (const encoding of ['hex', 'base64'] as const) {
            // Distinct timestamps: the same (timestamp, signature) twice is a replay.
            t += 1;
            const headers = xMailHeaders({
              secret: TEST_WEBHOOK_SECRET,
              body,
              timestamp: t,
              prefix,
              encoding,
            });
            await accepted(await post(ctx, `${BASE}/events`, body, headers));
          }
        }
      });

      it('accepts a body that arrives in chunks, verified over the same bytes', async () => {
        const body = JSON.stringify({ ...received, pad: 'x'.repeat(200_000) });
        const bytes = new TextEncoder().encode(body);
        const headers = standardWebhookHeaders({
          secret: TEST_WEBHOOK_SECRET,
          body,
          timestamp: seconds(ctx),
        });
        const stream = new ReadableStream<Uint8Array>({
          start(c) {
            for (let i = 0; i < bytes.length; i += 16_384) c.enqueue(bytes.slice(i, i + 16_384));
            c.close();
          },
        });
        const res = await ctx.request(`${BASE}/inbound`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: stream,
          duplex: 'half',
        } as RequestInit);
        const id = await accepted(res);
        expect((await ctx.ph.outbox.get(id))?.payload).toBe(body);
      });

      it('answers a redelivered webhook-id with the first outboxEventId and publishes nothing', async () => {
        const id = `msg_${randomBytes(8).toString('hex')}`;
        const body = JSON.stringify(delivered);
        const first = await accepted(await send(ctx, BASE, body, { id }));
        const before = await total(ctx);
        // A provider retry re-signs with a later timestamp; the id stays.
        ctx.clock.advance(90_000);
        expect(await accepted(await send(ctx, BASE, body, { id }))).toBe(first);
        expect(await accepted(await send(ctx, `${BASE}/inbound`, body, { id }))).toBe(first);
        const parallel = await Promise.all(
          Array.from({ length: 5 }, () => send(ctx, BASE, body, { id: `${id}_p` }).then(accepted)),
        );
        expect(new Set(parallel).size).toBe(1);
        expect(await total(ctx)).toBe(before + 1);
      });

      it('answers a replayed x-mail request with the first outboxEventId and publishes nothing', async () => {
        const body = JSON.stringify(received);
        const headers = xMailHeaders({ secret: TEST_WEBHOOK_SECRET, body, timestamp: seconds(ctx) });
        const first = await accepted(await post(ctx, BASE, body, headers));
        const before = await total(ctx);
        expect(await accepted(await post(ctx, BASE, body, headers))).toBe(first);
        expect(await total(ctx)).toBe(before);
      });

      describe('refuses with 401 webhook_signature_invalid and publishes nothing', () => {
        const body = JSON.stringify(delivered);
        const sign = (ctx: HttpContext, extra: Partial<Parameters<typeof standardWebhookHeaders>[0]> = {}) =>
          standardWebhookHeaders({ secret: TEST_WEBHOOK_SECRET, body, timestamp: seconds(ctx), ...extra });
        const cases: Array<
          [string, (ctx: HttpContext) => { headers: Record<string, string>; body?: string | Uint8Array }]
        > = [
          ['no signature headers', () => ({ headers: {} })],
          [
            'a webhook-id and timestamp without signature',
            (c) => {
              const { 'webhook-signature': _, ...rest } = sign(c);
              return { headers: rest };
            },
          ],
          [
            'a wrong signature',
            (c) => ({
              headers: { ...sign(c), 'webhook-signature': `v1,${randomBytes(32).toString('base64')}` },
            }),
          ],
          [
            'a signature made with another secret',
            (c) => ({ headers: sign(c, { secret: `whsec_${randomBytes(32).toString('base64')}` }) }),
          ],
          [
            'one tampered byte',
            (c) => {
              const bytes = new TextEncoder().encode(body);
              const headers = sign(c);
              bytes[bytes.length - 3] = bytes[bytes.length - 3]! ^ 1;
              return { headers, body: bytes };
            },
          ],
          ['a body with a byte appended', (c) => ({ headers: sign(c), body: `${body} ` })],
          [
            'a timestamp over five minutes old',
            (c) => ({ headers: sign(c, { timestamp: seconds(c) - 301 }) }),
          ],
          [
            'a timestamp over five minutes ahead',
            (c) => ({ headers: sign(c, { timestamp: seconds(c) + 301 }) }),
          ],
          [
            'a timestamp in milliseconds',
            (c) => ({ headers: sign(c, { timestamp: c.clock.now().getTime() }) }),
          ],
          [
            'a non-numeric timestamp',
            (c) => ({ headers: { ...sign(c), 'webhook-timestamp': `${seconds(c)}.0` } }),
          ],
          [
            'another webhook-id than the signed one',
            (c) => ({ headers: { ...sign(c), 'webhook-id': 'msg_other' } }),
          ],
          [
            'more than ten signatures',
            (c) => {
              const h = sign(c);
              const junk = Array.from({ length: 10 }, () => `v1,${randomBytes(32).toString('base64')}`);
              return { headers: { ...h, 'webhook-signature': [...junk, h['webhook-signature']].join(' ') } };
            },
          ],
          [
            'a non-v1 signature version',
            (c) => {
              const h = sign(c);
              return {
                headers: { ...h, 'webhook-signature': h['webhook-signature']!.replace('v1,', 'v2,') },
              };
            },
          ],
          [
            'a truncated signature',
            (c) => {
              const h = sign(c);
              return { headers: { ...h, 'webhook-signature': h['webhook-signature']!.slice(0, 20) } };
            },
          ],
          [
            'an x-mail signature without timestamp',
            (c) => {
              const { 'x-mail-signature': s } = xMailHeaders({
                secret: TEST_WEBHOOK_SECRET,
                body,
                timestamp: seconds(c),
              });
              return { headers: { 'x-mail-signature': s! } };
            },
          ],
          [
            'a stale x-mail timestamp',
            (c) => ({
              headers: xMailHeaders({ secret: TEST_WEBHOOK_SECRET, body, timestamp: seconds(c) - 301 }),
            }),
          ],
          [
            'an x-mail signature over the Standard Webhooks bytes',
            (c) => {
              const h = sign(c);
              return {
                headers: {
                  'x-mail-signature': h['webhook-signature']!,
                  'x-mail-timestamp': h['webhook-timestamp']!,
                },
              };
            },
          ],
        ];
        let ctx: HttpContext;
        let before: number;
        beforeAll(async () => {
          ctx = await env.setup();
          before = await total(ctx);
        });
        afterAll(async () => {
          expect(await total(ctx)).toBe(before);
          await ctx?.close();
        });
        for (const [name, make] of cases) {
          it(`for ${name}`, async () => {
            const { headers, body: sent } = make(ctx);
            for (const path of ROUTES) {
              const res = await post(ctx, path, sent ?? body, headers);
              expectSafeHeaders(res);
              await expectProblem(res, 401, 'webhook_signature_invalid');
            }
            expect(await total(ctx)).toBe(before);
          });
        }

        it('for a signature that was valid before the clock moved past the tolerance', async () => {
          const headers = sign(ctx);
          ctx.clock.advance(301_000);
          try {
            await expectProblem(await post(ctx, BASE, body, headers), 401, 'webhook_signature_invalid');
          } finally {
            ctx.clock.advance(-301_000);
          }
          await accepted(await post(ctx, BASE, body, headers));
          before += 1;
        });
      });

      describe('refuses a signed body that is not a JSON object with 400 and publishes nothing', () => {
        let ctx: HttpContext;
        beforeAll(async () => {
          ctx = await env.setup();
        });
        afterAll(() => ctx?.close());

        it.each([
          ['not JSON', '{"type":', 'invalid_json'],
          ['empty', '', 'invalid_json'],
          ['invalid UTF-8', new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), 'invalid_json'],
          ['an array', '[{"type":"email.delivered"}]', 'validation_failed'],
          ['null', 'null', 'validation_failed'],
          ['a string', '"email.received"', 'validation_failed'],
          ['a number', '42', 'validation_failed'],
        ] as Array<[string, string | Uint8Array, string]>)('%s', async (_name, body, code) => {
          const before = await total(ctx);
          for (const path of ROUTES) {
            const headers = standardWebhookHeaders({
              secret: TEST_WEBHOOK_SECRET,
              body,
              timestamp: seconds(ctx),
            });
            await expectProblem(await post(ctx, path, body, headers), 400, code);
          }
          expect(await total(ctx)).toBe(before);
        });
      });

      it('refuses a body over 10 MiB with 413, signed or not, and publishes nothing', async () => {
        const before = await total(ctx);
        const body = `{"pad":"${'x'.repeat(10 * MiB)}"}`;
        const headers = standardWebhookHeaders({
          secret: TEST_WEBHOOK_SECRET,
          body,
          timestamp: seconds(ctx),
        });
        await expectProblem(await post(ctx, BASE, body, headers), 413, 'payload_too_large');
        await expectProblem(await post(ctx, `${BASE}/events`, body, {}), 413, 'payload_too_large');
        expect(await total(ctx)).toBe(before);
      });
    });

    describe('without a secret', () => {
      it('answers 503 webhook_not_configured on every route, before looking at the signature', async () => {
        for (const settings of [
          {},
          { 'inbox.mail.webhook-secret': '' },
          { 'inbox.mail.webhook-secret': '   ' },
        ]) {
          const ctx = await env.setup({ settings });
          try {
            const body = JSON.stringify(delivered);
            for (const path of ROUTES) {
              const signed = standardWebhookHeaders({
                secret: TEST_WEBHOOK_SECRET,
                body,
                timestamp: seconds(ctx),
              });
              const res = await post(ctx, path, body, signed);
              expectSafeHeaders(res);
              await expectProblem(res, 503, 'webhook_not_configured');
              await expectProblem(await post(ctx, path, 'not json', {}), 503, 'webhook_not_configured');
            }
            expect(await total(ctx)).toBe(0);
          } finally {
            await ctx.close();
          }
        }
      });
    });

    describe('secret rotation', () => {
      it('reads the setting per request: any listed secret verifies, a removed one stops at once', async () => {
        const a = `whsec_${randomBytes(32).toString('base64')}`;
        const b = 'a-plain-utf8-secret-that-is-long-enough-✓';
        let value = a;
        const ctx = await env.setup({
          settings: { get: (key: string) => (key === 'inbox.mail.webhook-secret' ? value : undefined) },
        });
        try {
          const body = JSON.stringify(received);
          await accepted(await send(ctx, BASE, body, { secret: a }));
          await expectProblem(await send(ctx, BASE, body, { secret: b }), 401, 'webhook_signature_invalid');
          value = `${a} ${b}`;
          await accepted(await send(ctx, BASE, body, { secret: a }));
          await accepted(await send(ctx, BASE, body, { secret: b }));
          value = b;
          await expectProblem(await send(ctx, BASE, body, { secret: a }), 401, 'webhook_signature_invalid');
          await accepted(await send(ctx, BASE, body, { secret: b }));
        } finally {
          await ctx.close();
        }
      });
    });

    describe('configuration', () => {
      it('honours the base path, body limit, tolerance and header prefixes', async () => {
        const ctx = await env.setup({
          basePath: { webhook: '/hooks/mail' },
          bodyLimits: { webhook: 4096 },
          webhook: { toleranceSeconds: 60, headerPrefixes: ['resend', 'webhook'] },
        });
        try {
          const body = JSON.stringify(delivered);
          const sign = (timestamp: number, prefix = 'resend') =>
            standardWebhookHeaders({ secret: TEST_WEBHOOK_SECRET, body, timestamp, prefix });
          const id = await accepted(await post(ctx, '/hooks/mail/events', body, sign(seconds(ctx))));
          expect((await ctx.ph.outbox.get(id))?.name).toBe(EVENT);
          await accepted(await post(ctx, '/hooks/mail', body, sign(seconds(ctx), 'webhook')));
          await expectProblem(
            await post(ctx, '/hooks/mail', body, sign(seconds(ctx), 'svix')),
            401,
            'webhook_signature_invalid',
          );
          await expectProblem(
            await post(ctx, '/hooks/mail', body, sign(seconds(ctx) - 61)),
            401,
            'webhook_signature_invalid',
          );
          const big = JSON.stringify({ ...delivered, pad: 'x'.repeat(4096) });
          const bigHeaders = standardWebhookHeaders({
            secret: TEST_WEBHOOK_SECRET,
            body: big,
            timestamp: seconds(ctx),
            prefix: 'resend',
          });
          await expectProblem(
            await post(ctx, '/hooks/mail/inbound', big, bigHeaders),
            413,
            'payload_too_large',
          );
          const old = await ctx.request(`${BASE}/events`, { method: 'POST', body });
          expect(old.status).toBe(404);
        } finally {
          await ctx.close();
        }
      });
    });
  });
}
