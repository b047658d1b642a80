import { randomBytes, randomUUID } from 'node:crypto';
import type { Session, Stores } from '@postern/core/ports';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { postgresStores } from '../src/stores.js';
import { NO_SERVER_REASON, openTestDatabase, serverUrl, type TestDatabase } from './helpers/test-db.js';

// Several "instances" (each its own pool and stores, as separate app processes would have)
// race on one row. Whatever the timing, the database lets exactly one of them win.
const server = await serverUrl();
const RACERS = 8;
let db: TestDatabase;
let instances: Stores[] = [];
const pools: pg.Pool[] = [];
const t0 = new Date('2030-01-01T00:00:00Z');
const later = (ms: number) => new Date(t0.getTime() + ms);
const hex = () => randomBytes(16).toString('hex');

/** Runs `fn` on every instance at once and returns the results. */
const race = <T>(fn: (s: Stores, i: number) => Promise<T>) => Promise.all(instances.map((s, i) => fn(s, i)));
const winners = (results: unknown[]) => results.filter((r) => r !== null && r !== false).length;

function session(userId: string, over: Partial<Session> = {}): Session {
  return {
    id: randomUUID(),
    userId,
    createdAt: t0,
    expiresAt: later(30 * 86_400_000),
    idleExpiresAt: later(7 * 86_400_000),
    lastUsedAt: t0,
    authTime: t0,
    amr: ['pwd'],
    ip: '127.0.0.1',
    userAgent: null,
    endedAt: null,
    endReason: null,
    ...over,
  };
}

describe.skipIf(!server)(`races between instances${server ? '' : ` (skipped: ${NO_SERVER_REASON})`}`, () => {
  beforeAll(async () => {
    db = await openTestDatabase('races', { max: 4 });
    for (let i = 0; i < RACERS; i++) {
      const pool = new pg.Pool({ connectionString: db.url!, max: 2, options: '-c synchronous_commit=off' });
      pools.push(pool);
      instances.push(postgresStores({ pool, schema: db.schema, listen: false }));
    }
  });
  afterAll(async () => {
    for (const p of pools) await p.end();
    instances = [];
    await db?.close();
  });
  beforeEach(() => db.reset());

  it('one refresh token: exactly one rotation wins, the others see a used token', async () => {
    const [a] = instances;
    const s = session(randomUUID());
    await a!.sessions.create(s, { hash: 'tok', idleExpiresAt: s.idleExpiresAt }, { maxPerUser: 50 });
    const results = await race((x, i) =>
      x.sessions.rotate('tok', { hash: `next${i}`, idleExpiresAt: later(1000) }, later(1)),
    );
    expect(winners(results)).toBe(1);
    expect((await a!.sessions.findByToken('tok'))?.usedAt).toEqual(later(1));
  });

  it('one reset code, one pending login, one email code, one recovery code, one challenge: one winner each', async () => {
    const [a] = instances;
    const userId = randomUUID();
    await a!.resetCodes.create({
      hash: 'rc',
      userId,
      email: 'rc@example.test',
      createdAt: t0,
      expiresAt: later(60_000),
    });
    expect(winners(await race((x) => x.resetCodes.consume('rc', later(1))))).toBe(1);

    const jti = randomUUID();
    await a!.pendingLogins.create({
      jti,
      userId,
      refresh: false,
      methods: ['totp'],
      createdAt: t0,
      expiresAt: later(300_000),
      failures: 0,
      sends: 0,
      lastSentAt: null,
    });
    expect(winners(await race((x) => x.pendingLogins.consume(jti, later(1))))).toBe(1);

    await a!.emailCodes.put({
      key: 'login:x',
      userId,
      codeHash: 'h',
      createdAt: t0,
      expiresAt: later(60_000),
    });
    expect(winners(await race((x) => x.emailCodes.consume('login:x', 'h', later(1))))).toBe(1);

    await a!.recoveryCodes.replaceAll(userId, [
      { id: 'r1', userId, selector: 'ab', hash: 'x', createdAt: t0 },
    ]);
    expect(winners(await race((x) => x.recoveryCodes.use(userId, 'r1')))).toBe(1);

    await a!.webauthnChallenges.putChallenge({
      purpose: 'authenticate',
      subject: jti,
      userId,
      challenge: hex(),
      expiresAt: later(60_000),
    });
    expect(
      winners(await race((x) => x.webauthnChallenges.takeChallenge('authenticate', jti, later(1)))),
    ).toBe(1);
  });

  it('one TOTP step and one WebAuthn counter value: one compare-and-set wins', async () => {
    const [a] = instances;
    const userId = randomUUID();
    await a!.mfaFactors.enableFactor({
      userId,
      type: 'totp',
      enabledAt: t0,
      secret: { kid: 'k', iv: hex(), data: hex() },
      lastStep: 10,
    });
    expect(winners(await race((x) => x.mfaFactors.acceptTotpStep(userId, 11)))).toBe(1);
    await a!.webauthnCredentials.addCredential({
      id: 'cred',
      userId,
      publicKey: new Uint8Array([1, 2, 3]),
      counter: 5,
      transports: [],
      name: 'key',
      deviceType: 'singleDevice',
      backedUp: false,
      createdAt: t0,
      lastUsedAt: null,
    });
    expect(winners(await race((x) => x.webauthnCredentials.updateCounter('cred', 5, 6, later(1))))).toBe(1);
  });

  it('wrong codes counted from every instance at once are never lost, and the fifth kills the login', async () => {
    const [a] = instances;
    const jti = randomUUID();
    await a!.pendingLogins.create({
      jti,
      userId: randomUUID(),
      refresh: false,
      methods: ['totp'],
      createdAt: t0,
      expiresAt: later(300_000),
      failures: 0,
      sends: 0,
      lastSentAt: null,
    });
    const counts = await race((x) => x.pendingLogins.recordFailure(jti, 5, later(1)));
    expect(counts.filter((c) => c !== null).sort()).toEqual([1, 2, 3, 4, 5]);
    expect(await a!.pendingLogins.get(jti, later(2))).toBeNull();
  });

  it('limiter hits from every instance at once all count', async () => {
    await Promise.all(
      Array.from({ length: 5 }, () =>
        race((x) => x.limiter.consume('login:ip:1.2.3.4', 1, 60_000, later(1))),
      ),
    );
    expect((await instances[0]!.limiter.get('login:ip:1.2.3.4', later(2)))?.points).toBe(5 * RACERS);
  });

  it('one signup email, one inbound message id, one attachment source, one notification key: one winner each', async () => {
    const users = await race((x, i) =>
      x.users.create({
        id: randomUUID(),
        email: 'ann@example.com',
        name: `Ann ${i}`,
        passwordHash: 'h',
        roles: [],
        emailVerified: false,
        disabled: false,
        createdAt: t0,
        passwordChangedAt: t0,
      }),
    );
    expect(winners(users)).toBe(1);

    const accountId = randomUUID();
    const inserted = await race((x) =>
      x.inboxMessages.insert({
        id: randomUUID(),
        accountId,
        threadId: randomUUID(),
        direction: 'inbound',
        providerMessageId: 'pmid-1',
        messageId: null,
        inReplyTo: [],
        references: [],
        from: 'a@b.c',
        fromAddress: 'a@b.c',
        replyTo: null,
        to: ['x@y.z'],
        cc: [],
        recipients: ['x@y.z'],
        subject: 's',
        subjectKey: 's',
        text: 't',
        html: null,
        status: 'received',
        openedAt: null,
        openCount: 0,
        clickedAt: null,
        clickCount: 0,
        threadKeys: [],
        createdAt: t0,
        processedAt: null,
      }),
    );
    expect(inserted.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(inserted.map((r) => r.message.id)).size).toBe(1);

    const atts = await race((x) =>
      x.inboxAttachments.insert({
        id: randomUUID(),
        accountId,
        messageId: inserted[0]!.message.id,
        sourceKey: 'part-1',
        filename: 'a.txt',
        contentType: 'text/plain',
        size: 1,
        contentId: null,
        inline: false,
        fileKey: hex(),
        createdAt: t0,
      }),
    );
    expect(new Set(atts.map((a) => a.id)).size).toBe(1);

    const claims = await race((x) => x.inboxNotifications.claim('m:u', later(1), later(60_000), 'evt'));
    expect(claims.filter((c) => c === 'claimed')).toHaveLength(1);
  });

  it('concurrent logins of one user keep the session cap', async () => {
    const userId = randomUUID();
    await race((x, i) =>
      x.sessions.create(session(userId, { createdAt: later(i) }), null, { maxPerUser: 3 }),
    );
    expect(await instances[0]!.sessions.listForUser(userId, later(100))).toHaveLength(3);
  });

  it('the ended-session feed never skips an end that commits after a cursor was handed out', async () => {
    const [a, b] = instances;
    const s1 = session(randomUUID());
    const s2 = session(randomUUID());
    await a!.sessions.create(s1, null, { maxPerUser: 50 });
    await a!.sessions.create(s2, null, { maxPerUser: 50 });
    const first = await b!.sessions.endedSince(null, t0);
    let cursor = first.cursor;
    // s1 ends in a transaction that stays open while s2 ends and commits, and the feed is read.
    await a!.transaction(async (tx) => {
      await tx.sessions.revoke(s1.id, later(1), 'logout');
      await b!.sessions.revoke(s2.id, later(2), 'logout');
      const page = await b!.sessions.endedSince(cursor, t0);
      expect(page.sids).toEqual([s2.id]);
      cursor = page.cursor;
    });
    const seen = new Set<string>();
    for (let i = 0; i < 3 && !seen.has(s1.id); i++) {
      const page = await b!.sessions.endedSince(cursor, t0);
      for (const sid of page.sids) seen.add(sid);
      cursor = page.cursor;
    }
    expect(seen.has(s1.id)).toBe(true);
  });

  it('the ended-session feed starts over from a cursor ahead of this server or one Postgres would refuse', async () => {
    const [a, b] = instances;
    const s1 = session(randomUUID());
    await a!.sessions.create(s1, null, { maxPerUser: 50 });
    await a!.sessions.revoke(s1.id, later(1), 'logout');
    const { cursor } = await b!.sessions.endedSince(null, t0);
    const xmax = BigInt(cursor.split(':')[1]!);
    // A failover that lost the tail, a restore: the cursor names transactions this server has
    // not reached, and reading past its xmax would skip s1 (and every later end) for good.
    for (const given of [`${xmax + 1000n}:${xmax + 1000n}:`, '5:3:', '5:9:4'])
      expect((await b!.sessions.endedSince(given, t0)).sids).toContain(s1.id);
  });

  it('the ended-session feed reads each end once while a long transaction elsewhere holds xmin back', async () => {
    const [a, b] = instances;
    // A transaction with a write, left open (another app on the cluster, a stuck migration).
    const holder = new pg.Client({ connectionString: db.url! });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_current_xact_id()');
      let cursor = (await b!.sessions.endedSince(null, t0)).cursor;
      const ended = [session(randomUUID()), session(randomUUID()), session(randomUUID())];
      for (const s of ended) {
        await a!.sessions.create(s, null, { maxPerUser: 50 });
        await a!.sessions.revoke(s.id, later(1), 'logout');
      }
      const page = await b!.sessions.endedSince(cursor, t0);
      expect(page.sids).toEqual(ended.map((s) => s.id));
      cursor = page.cursor;
      // Before: every poll re-read every end since the holder began.
      expect((await b!.sessions.endedSince(cursor, t0)).sids).toEqual([]);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
  });
});
