import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { setup } from './helpers.js';

const OUTCOMES = /^(stored|resumed|duplicate|no_account|provider_not_found|invalid_payload)$/;
const DELIVERY_OUTCOMES = /^(applied|pending|duplicate|ignored|invalid_payload)$/;

/** Values that look like what a provider might send, in every wrong type. */
const field = fc.oneof(
  fc.string(),
  fc.constantFrom('support@acme.test', 'Ann <ann@x.test>', '<id@x>', 'Re: Re: hi', '=?utf-8?B?w7w=?='),
  fc.array(fc.oneof(fc.string(), fc.constant('support@acme.test'), fc.object()), { maxLength: 4 }),
  fc.integer(),
  fc.constant(null),
  fc.object({ maxDepth: 2 }),
);
const data = fc.dictionary(
  fc.constantFrom(
    'email_id',
    'from',
    'to',
    'cc',
    'bcc',
    'received_for',
    'subject',
    'message_id',
    'html',
    'text',
    'headers',
    'raw',
    'attachments',
    'reply_to',
    '__proto__',
    'constructor',
  ),
  field,
);
const payload = fc.oneof(
  fc.record({ type: fc.oneof(fc.constant('email.received'), fc.string()), data }),
  data,
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.string(),
);

describe('consumers never crash on odd payloads', () => {
  it('the inbound consumer finishes every payload with a known outcome', async () => {
    const t = setup();
    const owner = await t.user();
    await t.ph.inbox.createAccount(owner.id, { address: 'support@acme.test', name: 'S' });
    await fc.assert(
      fc.asyncProperty(payload, async (p) => {
        const out = await t.deliver('inbound', p);
        expect(out).toMatchObject({ outcome: expect.stringMatching(OUTCOMES) });
      }),
      { numRuns: 300 },
    );
  });

  it('the delivery consumer finishes every payload with a known outcome', async () => {
    const t = setup();
    const events = fc.oneof(
      fc.record({
        type: fc.oneof(fc.constantFrom('email.delivered', 'opened', 'email.clicked'), fc.string()),
        created_at: field,
        data: fc.record({ email_id: field, bounce: field, failed: field }, { requiredKeys: [] }),
      }),
      payload,
    );
    await fc.assert(
      fc.asyncProperty(events, async (p) => {
        const out = await t.deliver('delivery', p);
        expect(out).toMatchObject({ outcome: expect.stringMatching(DELIVERY_OUTCOMES) });
      }),
      { numRuns: 300 },
    );
  });
});
