// Signed webhook requests shared by the intake benchmarks: one Resend payload, Standard Webhooks
// headers signed before the run (signing costs the load generator nothing), a distinct
// `webhook-id` per request so every request is a real insert (no dedupe short-cut).
import { createHmac, randomUUID } from 'node:crypto';

/** A Resend `email.delivered` payload (fixtures/resend), about 460 bytes. */
export const WEBHOOK_BODY = JSON.stringify({
  type: 'email.delivered',
  created_at: '2026-02-22T23:41:12.126Z',
  data: {
    broadcast_id: '8b146471-e88e-4322-86af-016cd36fd216',
    created_at: '2026-02-22T23:41:11.894719+00:00',
    email_id: '56761188-7520-42d8-8898-ff6fc54ce618',
    message_id: '<111-222-333@email.example.com>',
    from: 'Acme <onboarding@resend.dev>',
    to: ['delivered@resend.dev'],
    subject: 'Sending this example',
    template_id: '43f68331-0622-4e15-8202-246a0388854b',
    tags: { category: 'confirm_email' },
  },
});

/** Standard Webhooks headers for `body`, signed with `secret` (`whsec_<base64>`) at `ts`
 *  (Unix seconds) under a fresh `webhook-id`. */
export function signWebhook(secret, body, ts = Math.floor(Date.now() / 1000)) {
  const key = Buffer.from(secret.slice(6), 'base64');
  const id = `msg_${randomUUID()}`;
  const sig = createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': `v1,${sig}` };
}

/** `count` header sets for the benchmark payload, signed with `secret`. */
export function signedHeaders(secret, count) {
  const ts = Math.floor(Date.now() / 1000);
  return Array.from({ length: count }, () => ({
    'content-type': 'application/json',
    ...signWebhook(secret, WEBHOOK_BODY, ts),
  }));
}

/** autocannon `requests` posting the payload with the next header set each time. */
export function intakeRequests(headers) {
  let next = 0;
  return [
    {
      method: 'POST',
      path: '/inbox/webhook',
      body: WEBHOOK_BODY,
      setupRequest: (req) => ({ ...req, headers: headers[next++ % headers.length] }),
    },
  ];
}
