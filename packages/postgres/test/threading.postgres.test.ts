import { randomUUID } from 'node:crypto';
import { createPostern, type Postern } from '@postern/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStores } from '../src/stores.js';
import { openTestDatabase, type TestDatabase } from './helpers/test-db.js';

// Several Postern instances on one schema stand for several worker processes: each has its
// own in-process serialisation, so only the database's subject lock keeps their threading apart.

let db: TestDatabase;
let instances: Postern[];
beforeAll(async () => {
  db = await openTestDatabase('threading');
  instances = Array.from({ length: 4 }, () =>
    createPostern({
      issuer: 'https://threads.test',
      audience: 'threads',
      stores: postgresStores({ pool: db.pool, schema: db.schema, listen: false }),
    }),
  );
});
afterAll(async () => {
  for (const ph of instances ?? []) await ph.close();
  await db?.close();
});

describe('inbound threading across processes', () => {
  it('puts new mails with one new subject, consumed at once by several workers, into one thread', async () => {
    const [first] = instances;
    const now = new Date();
    const { user: owner } = await first!.auth.signup({
      name: 'Owner',
      email: `${randomUUID()}@users.test`,
      password: 'Tangerine-Orbit-Velvet-4821',
    });
    const address = `desk-${randomUUID()}@acme.test`;
    const account = await first!.inbox.createAccount(owner.id, { address, name: 'Desk' });

    const outcomes = await Promise.all(
      instances.map((ph, i) =>
        ph.inbox.consumers.inbound({
          id: randomUUID(),
          name: 'inbound',
          payload: JSON.stringify({
            type: 'email.received',
            data: {
              email_id: randomUUID(),
              from: `sender-${i}@customer.test`,
              to: [address],
              subject: i % 2 ? 'Re: Outage right now' : 'Outage right now',
              text: `report ${i}`,
              attachments: [],
            },
          }),
          attempt: 1,
          createdAt: now,
        }),
      ),
    );
    expect(outcomes).toEqual(Array(instances.length).fill({ outcome: 'stored' }));
    const { threads } = await first!.inbox.listThreads(owner.id, account.id);
    expect(threads).toHaveLength(1);
    expect(threads[0]!.messageCount).toBe(instances.length);
  });
});
