import { randomBytes } from 'node:crypto';
import { TestClock } from '@postern/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresStores } from '../src/stores.js';
import { NO_SERVER_REASON, openTestDatabase, serverUrl } from './helpers/test-db.js';

// The session-creating function takes only what a new session can have: it is live, so no end
// time or reason is passed (they were always NULL).
const server = await serverUrl();
const hex = () => randomBytes(16).toString('hex');

describe.skipIf(!server)(`create_session${server ? '' : ` (skipped: ${NO_SERVER_REASON})`}`, async () => {
  const db = await openTestDatabase('create_session_fn');
  afterAll(() => db.close());
  const clock = new TestClock(Date.UTC(2030, 0, 1));
  const stores = postgresStores({ pool: db.pool, schema: db.schema, clock, listen: false });
  afterAll(() => stores.close?.());

  it('has no end-time or end-reason parameter, and one version only', async () => {
    const r = await db.pool.query(
      `SELECT p.proargnames FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
       WHERE n.nspname = $1 AND p.proname = 'create_session'`,
      [db.schema],
    );
    expect(r.rows).toHaveLength(1);
    const names = r.rows[0].proargnames as string[];
    expect(names).not.toContain('p_ended_at');
    expect(names).not.toContain('p_end_reason');
  });

  it('creates a live session that reads back as given', async () => {
    const now = clock.now();
    const session = {
      id: hex(),
      userId: hex(),
      createdAt: now,
      expiresAt: new Date(now.getTime() + 3600_000),
      idleExpiresAt: new Date(now.getTime() + 1800_000),
      lastUsedAt: now,
      authTime: now,
      amr: ['pwd'],
      ip: '192.0.2.7',
      userAgent: 'test',
      endedAt: null,
      endReason: null,
    };
    await stores.sessions.create(
      session,
      { hash: hex(), idleExpiresAt: session.idleExpiresAt },
      { maxPerUser: 5 },
    );
    expect(await stores.sessions.findById(session.id)).toEqual(session);
  });
});
