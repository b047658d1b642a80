import { generateKeyPairSync } from 'node:crypto';
import { memoryStores } from '@postern/core/memory';
import { type SessionStore, StoreError, type Stores } from '@postern/core/ports';
import { TestClock } from '@postern/testkit';
import { decodeJwt } from 'jose';
import { describe, expect, it, vi } from 'vitest';
import { session, setup, user } from './setup.js';

const MIN = 60_000;
const DAY = 24 * 60 * MIN;
const invalid = { code: 'invalid_token' };
/** Instances of one deployment share their signing key. */
const keys = { alg: 'EdDSA' as const, key: generateKeyPairSync('ed25519').privateKey, kid: 'shared' };

/** The memory stores as a database would look to the auth area: not in-process, so ended
 *  sessions reach other instances through the polled feed only. */
function remoteLike(stores: Stores, failing: { on: boolean } = { on: false }): Stores {
  const sessions: SessionStore = {
    ...stores.sessions,
    inProcess: false,
    endedSince: (cursor, notBefore) =>
      failing.on
        ? Promise.reject(new StoreError('database down'))
        : stores.sessions.endedSince(cursor, notBefore),
  };
  return { ...stores, sessions };
}

describe('refresh rotation budget', () => {
  const budget = { throttle: { 'refresh:session': { points: 2, durationSeconds: 60 } } };

  it('over the budget: 429 until the window ends, the token still good; an old token is still reuse', async () => {
    const t = setup(budget);
    const s = await session(t, await user(t));
    const r1 = await t.ph.auth.refresh({ refreshToken: s.refreshToken });
    t.clock.advance(20_000);
    const r2 = await t.ph.auth.refresh({ refreshToken: r1.refreshToken! });
    await expect(t.ph.auth.refresh({ refreshToken: r2.refreshToken! })).rejects.toMatchObject({
      code: 'rate_limited',
      retryAfter: 40, // the window began at the first rotation
    });
    t.clock.advance(40_000);
    const r3 = await t.ph.auth.refresh({ refreshToken: r2.refreshToken! });
    // Over the budget again, a rotated token is still reuse: the family ends.
    await t.ph.auth.refresh({ refreshToken: r3.refreshToken! });
    await expect(t.ph.auth.refresh({ refreshToken: r1.refreshToken! })).rejects.toMatchObject(invalid);
    await expect(t.ph.auth.verifyAccessToken(r3.accessToken)).rejects.toMatchObject(invalid);
  });

  it('an unused token a store refused without a reason is no reuse: 503, the session lives', async () => {
    const clock = new TestClock(Date.UTC(2030, 0, 1));
    const stores = memoryStores({ clock });
    let refuse = true;
    const rotate: SessionStore['rotate'] = async (...args) => {
      if (!refuse) return stores.sessions.rotate(...args);
      refuse = false;
      return null;
    };
    const t = setup({}, { clock, stores: { ...stores, sessions: { ...stores.sessions, rotate } } });
    const s = await session(t, await user(t));
    await expect(t.ph.auth.refresh({ refreshToken: s.refreshToken })).rejects.toMatchObject({
      code: 'unavailable',
      retryAfter: 1,
    });
    await expect(t.ph.auth.verifyAccessToken(s.accessToken)).resolves.toMatchObject({});
    await expect(t.ph.auth.refresh({ refreshToken: s.refreshToken })).resolves.toMatchObject({});
  });

  it('a grace repeat over the budget waits (429) instead of ending the session', async () => {
    const t = setup({ ...budget, refreshReuseGraceSeconds: 30 });
    const s = await session(t, await user(t));
    const r1 = await t.ph.auth.refresh({ refreshToken: s.refreshToken });
    await t.ph.auth.refresh({ refreshToken: r1.refreshToken! });
    // A second tab repeats r1 within the grace window, with the budget spent.
    await expect(t.ph.auth.refresh({ refreshToken: r1.refreshToken! })).rejects.toMatchObject({
      code: 'rate_limited',
    });
    await expect(t.ph.auth.verifyAccessToken(r1.accessToken)).resolves.toMatchObject({});
  });
});

describe('sessions', () => {
  it('a reused refresh token ends the family: its access tokens and newer refresh tokens die', async () => {
    const t = setup();
    const u = await user(t);
    const s = await session(t, u);
    const r1 = await t.ph.auth.refresh({ refreshToken: s.refreshToken });
    await expect(t.ph.auth.refresh({ refreshToken: s.refreshToken })).rejects.toMatchObject(invalid);
    await expect(t.ph.auth.refresh({ refreshToken: r1.refreshToken! })).rejects.toMatchObject(invalid);
    await expect(t.ph.auth.verifyAccessToken(r1.accessToken)).rejects.toMatchObject(invalid);
    const sid = decodeJwt(s.accessToken).sid as string;
    expect(await t.stores.sessions.findById(sid)).toMatchObject({ endReason: 'refresh_reuse' });
    expect(t.log.lines.some((e) => e.fields.event === 'refresh_reuse' && e.fields.sid === sid)).toBe(true);
  });

  it('stores only the SHA-256 of refresh tokens', async () => {
    const t = setup();
    const u = await user(t);
    const s = await session(t, u);
    expect(await t.stores.sessions.findByToken(s.refreshToken)).toBeNull();
    const { createHash } = await import('node:crypto');
    const hash = createHash('sha256').update(s.refreshToken).digest('base64url');
    expect(await t.stores.sessions.findByToken(hash)).not.toBeNull();
  });

  it('ends a session idle for 7 days, even though its absolute end is later', async () => {
    const t = setup();
    const u = await user(t);
    const s = await session(t, u);
    t.clock.advance(7 * DAY - MIN);
    const r = await t.ph.auth.refresh({ refreshToken: s.refreshToken });
    t.clock.advance(7 * DAY);
    await expect(t.ph.auth.refresh({ refreshToken: r.refreshToken! })).rejects.toMatchObject(invalid);
  });

  it('ends a session 30 days after login however often it is refreshed', async () => {
    const t = setup();
    const u = await user(t);
    let token = (await session(t, u)).refreshToken;
    for (let day = 0; day < 29; day++) {
      t.clock.advance(DAY);
      token = (await t.ph.auth.refresh({ refreshToken: token })).refreshToken!;
    }
    t.clock.advance(DAY);
    await expect(t.ph.auth.refresh({ refreshToken: token })).rejects.toMatchObject(invalid);
  });

  it('follows refreshTokenTtlSeconds and refreshIdleSeconds', async () => {
    const t = setup({ refreshTokenTtlSeconds: 3600, refreshIdleSeconds: 600 });
    const u = await user(t);
    const s = await session(t, u);
    t.clock.advance(9 * MIN);
    const r = await t.ph.auth.refresh({ refreshToken: s.refreshToken });
    t.clock.advance(11 * MIN);
    await expect(t.ph.auth.refresh({ refreshToken: r.refreshToken! })).rejects.toMatchObject(invalid);
  });

  it('a session without a refresh token is listed while its access token lives', async () => {
    const t = setup();
    const u = await user(t);
    const a = await t.ph.auth.login({ email: u.email, password: u.password });
    if (!('accessToken' in a)) throw new Error('unexpected MFA');
    expect(a.refreshToken).toBeUndefined();
    const p = await t.ph.auth.verifyAccessToken(a.accessToken);
    expect((await t.ph.auth.listSessions(p)).sessions).toHaveLength(1);
    t.clock.advance(15 * MIN);
    expect((await t.ph.auth.listSessions(p)).sessions).toHaveLength(0);
  });

  it('keeps at most maxSessionsPerUser sessions: the oldest ends and its token is refused', async () => {
    const t = setup({ maxSessionsPerUser: 2 });
    const u = await user(t);
    const first = await session(t, u);
    t.clock.advance(1000);
    await session(t, u);
    t.clock.advance(1000);
    const third = await session(t, u);
    await expect(t.ph.auth.verifyAccessToken(first.accessToken)).rejects.toMatchObject(invalid);
    await expect(t.ph.auth.refresh({ refreshToken: first.refreshToken })).rejects.toMatchObject(invalid);
    const p = await t.ph.auth.verifyAccessToken(third.accessToken);
    expect((await t.ph.auth.listSessions(p)).sessions).toHaveLength(2);
  });

  it('another instance on the same in-process store refuses a logged-out session at once', async () => {
    const a = setup({ keys });
    const b = setup({ keys }, { stores: a.stores, clock: a.clock });
    const u = await user(a);
    const s = await session(a, u);
    await b.ph.auth.verifyAccessToken(s.accessToken);
    await a.ph.auth.logout({ refreshToken: s.refreshToken });
    await expect(b.ph.auth.verifyAccessToken(s.accessToken)).rejects.toMatchObject(invalid);
  });

  it('another instance on a remote store learns of an ended session within one second', async () => {
    const clock = new TestClock();
    const shared = memoryStores({ clock });
    const a = setup({ keys }, { stores: remoteLike(shared), clock });
    const b = setup({ keys }, { stores: remoteLike(shared), clock });
    const u = await user(a);
    const s = await session(a, u);
    await b.ph.auth.verifyAccessToken(s.accessToken);
    await a.ph.auth.logout({ refreshToken: s.refreshToken });
    // Instance A ended it itself: refused there without waiting.
    await expect(a.ph.auth.verifyAccessToken(s.accessToken)).rejects.toMatchObject(invalid);
    const started = performance.now();
    await vi.waitFor(
      () => expect(b.ph.auth.verifyAccessToken(s.accessToken)).rejects.toMatchObject(invalid),
      {
        timeout: 1000,
        interval: 50,
      },
    );
    expect(performance.now() - started).toBeLessThan(1000);
    await a.ph.close();
    await b.ph.close();
  });

  it('a new instance refuses sessions that ended before it started', async () => {
    const clock = new TestClock();
    const shared = memoryStores({ clock });
    const a = setup({ keys }, { stores: remoteLike(shared), clock });
    const u = await user(a);
    const s = await session(a, u);
    await a.ph.auth.logout({ refreshToken: s.refreshToken });
    const late = setup({ keys }, { stores: remoteLike(shared), clock });
    await expect(late.ph.auth.verifyAccessToken(s.accessToken)).rejects.toMatchObject(invalid);
    await a.ph.close();
    await late.ph.close();
  });

  it('fails closed when the ended-session feed of a remote store cannot be read', async () => {
    const clock = new TestClock();
    const shared = memoryStores({ clock });
    const failing = { on: true };
    const t = setup({}, { stores: remoteLike(shared, failing), clock });
    const u = await user(t);
    const s = await session(t, u);
    await expect(t.ph.auth.verifyAccessToken(s.accessToken)).rejects.toBeInstanceOf(StoreError);
    failing.on = false;
    await t.ph.auth.verifyAccessToken(s.accessToken);
    await t.ph.close();
  });

  it('revokeSession needs fresh auth, ends only own sessions, and revokeOtherSessions spares the current one', async () => {
    const t = setup();
    const u = await user(t);
    const other = await user(t);
    const s1 = await session(t, u);
    const s2 = await session(t, u);
    const s3 = await session(t, u);
    const so = await session(t, other);
    const p1 = await t.ph.auth.verifyAccessToken(s1.accessToken);
    const sid2 = decodeJwt(s2.accessToken).sid as string;
    const sidOther = decodeJwt(so.accessToken).sid as string;
    await expect(t.ph.auth.revokeSession(p1, sidOther)).rejects.toMatchObject({ code: 'not_found' });
    await t.ph.auth.verifyAccessToken(so.accessToken);
    await t.ph.auth.revokeSession(p1, sid2);
    await expect(t.ph.auth.verifyAccessToken(s2.accessToken)).rejects.toMatchObject(invalid);
    t.clock.advance(11 * MIN);
    const r1 = await t.ph.auth.refresh({ refreshToken: s1.refreshToken });
    const fresh1 = await t.ph.auth.verifyAccessToken(r1.accessToken);
    await expect(t.ph.auth.revokeOtherSessions(fresh1)).rejects.toMatchObject({
      code: 'reauth_required',
      status: 403,
    });
    await t.ph.auth.revokeOtherSessions(fresh1, { password: u.password });
    await expect(t.ph.auth.refresh({ refreshToken: s3.refreshToken })).rejects.toMatchObject(invalid);
    await t.ph.auth.verifyAccessToken(r1.accessToken);
  });
});
