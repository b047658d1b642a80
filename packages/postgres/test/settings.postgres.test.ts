import { createPostern } from '@postern/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresSettings } from '../src/settings.js';
import { postgresStores } from '../src/stores.js';
import { openTestDatabase, type TestDatabase } from './helpers/test-db.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await openTestDatabase('settings');
});
afterAll(() => db?.close());

describe('postgresSettings', () => {
  it('shares a value between instances, and a change reaches the others within the cache time', async () => {
    const a = postgresSettings({ pool: db.pool, schema: db.schema, cacheMs: 50 });
    const b = postgresSettings({ pool: db.pool, schema: db.schema, cacheMs: 50 });
    expect(await b.get('inbox.mail.webhook-secret')).toBeUndefined();
    await a.set('inbox.mail.webhook-secret', 'whsec_one');
    expect(await a.get('inbox.mail.webhook-secret')).toBe('whsec_one');
    await new Promise((r) => setTimeout(r, 60));
    expect(await b.get('inbox.mail.webhook-secret')).toBe('whsec_one');
    await a.set('inbox.mail.webhook-secret', undefined);
    expect(await a.get('inbox.mail.webhook-secret')).toBeUndefined();
  });

  it('feeds the webhook secret of a Postern: absent means 503, set means the webhook is checked', async () => {
    const settings = postgresSettings({ pool: db.pool, schema: db.schema, cacheMs: 0 });
    const ph = createPostern({
      issuer: 'https://s.test',
      audience: 's',
      stores: postgresStores({ pool: db.pool, schema: db.schema, listen: false }),
      settings,
    });
    const post = () =>
      ph.handle({
        method: 'POST',
        path: '/inbox/webhook',
        headers: { 'content-type': 'application/json' },
        body: new TextEncoder().encode('{}'),
        ip: '127.0.0.1',
      });
    expect((await post())?.status).toBe(503);
    await settings.set('inbox.mail.webhook-secret', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw');
    expect((await post())?.status).toBe(401);
    await ph.close();
  });
});
