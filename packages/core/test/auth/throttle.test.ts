import { memoryStores } from '@postern/core/memory';
import { type LimiterStore, StoreError } from '@postern/core/ports';
import { TestClock } from '@postern/testkit';
import { describe, expect, it } from 'vitest';
import { email, setup, user } from './setup.js';

const MIN = 60_000;
const limited = { code: 'rate_limited', status: 429 };
const bad = { code: 'invalid_credentials' };

describe('throttling', () => {
  it('library calls are limited like HTTP: 10 failed logins per email, then 429 with retryAfter', async () => {
    const t = setup();
    const u = await user(t);
    for (let i = 0; i < 10; i++)
      await expect(t.ph.auth.login({ email: u.email, password: `nope-${i}` })).rejects.toMatchObject(bad);
    const err = await t.ph.auth.login({ email: u.email, password: u.password }).catch((e) => e);
    expect(err).toMatchObject(limited);
    expect(err.retryAfter).toBeGreaterThan(14 * 60);
    expect(err.retryAfter).toBeLessThanOrEqual(15 * 60);
    t.clock.advance(15 * MIN);
    await t.ph.auth.login({ email: u.email, password: u.password });
  });

  it("a stranger's failures from one address never refuse the owner on another", async () => {
    const t = setup();
    const u = await user(t);
    const A = '203.0.113.10';
    const B = '198.51.100.20';
    for (let i = 0; i < 10; i++)
      await expect(
        t.ph.auth.login({ email: u.email, password: `nope-${i}` }, { ip: A }),
      ).rejects.toMatchObject(bad);
    await t.ph.auth.login({ email: u.email, password: u.password }, { ip: B });
    // Re-authentication and a password change go through the same buckets.
    const p = await t.ph.auth.verifyAccessToken(
      (
        (await t.ph.auth.login({ email: u.email, password: u.password }, { ip: B })) as {
          accessToken: string;
        }
      ).accessToken,
    );
    await t.ph.auth.requireFreshAuth(p, { password: u.password, requirePassword: true }, { ip: B });
    // The 11th from A is refused, the right password included, before any hash.
    await expect(t.ph.auth.login({ email: u.email, password: u.password }, { ip: A })).rejects.toMatchObject(
      limited,
    );
    await expect(
      t.ph.auth.requireFreshAuth(p, { password: u.password, requirePassword: true }, { ip: A }),
    ).rejects.toMatchObject(limited);
    // The owner's success on B did not forgive A's failures; the window's end does.
    t.clock.advance(15 * MIN);
    await t.ph.auth.login({ email: u.email, password: u.password }, { ip: A });
  });

  it('a refused guess costs nothing in the buckets that let it through (all counted in one call)', async () => {
    const t = setup({
      throttle: {
        'login:email': { points: 15, durationSeconds: 900 },
        'login:ip': { points: 15, durationSeconds: 900 },
      },
    });
    const u = await user(t);
    const A = '203.0.113.77';
    for (let i = 0; i < 10; i++)
      await expect(
        t.ph.auth.login({ email: u.email, password: `nope-${i}` }, { ip: A }),
      ).rejects.toMatchObject(bad);
    // Refused by the pair bucket: the address and email buckets are given their points back.
    for (let i = 0; i < 20; i++)
      await expect(t.ph.auth.login({ email: u.email, password: 'nope' }, { ip: A })).rejects.toMatchObject({
        ...limited,
        reason: 'login:email+ip',
      });
    await t.ph.auth.login({ email: u.email, password: u.password }, { ip: '198.51.100.9' });
    // The address still has room for other emails (10 of 15 counted there).
    const other = await user(t);
    await t.ph.auth.login({ email: other.email, password: other.password }, { ip: A });
  });

  it("a flood of refused guesses from one address never holds the owner's email bucket, even for a moment", async () => {
    const t = setup({ throttle: { 'login:ip': { points: 1000, durationSeconds: 900 } } });
    const u = await user(t);
    const A = '203.0.113.78';
    for (let i = 0; i < 10; i++)
      await expect(
        t.ph.auth.login({ email: u.email, password: `nope-${i}` }, { ip: A }),
      ).rejects.toMatchObject(bad);
    // 100 guesses refused by the pair bucket run alongside the owner's login from elsewhere:
    // were each counted in the email's bucket before being refused and given back, the owner
    // would meet that bucket's ceiling (100) while they are in flight.
    const flood = Array.from({ length: 100 }, () =>
      t.ph.auth.login({ email: u.email, password: 'nope' }, { ip: A }).catch((e) => e),
    );
    const owner = t.ph.auth.login({ email: u.email, password: u.password }, { ip: '198.51.100.9' });
    const [refused, signedIn] = await Promise.all([Promise.all(flood), owner.catch((e) => e)]);
    expect(refused.every((e) => e.code === 'rate_limited' && e.reason === 'login:email+ip')).toBe(true);
    expect(signedIn).toHaveProperty('accessToken');
  });

  it('failures from many addresses meet the ceiling of the email alone (100 per 15 min)', async () => {
    const t = setup({ throttle: { 'login:email': { points: 25, durationSeconds: 900 } } });
    const u = await user(t);
    for (let i = 0; i < 25; i++)
      await expect(
        t.ph.auth.login({ email: u.email, password: 'nope' }, { ip: `203.0.113.${i}` }),
      ).rejects.toMatchObject(bad);
    await expect(
      t.ph.auth.login({ email: u.email, password: u.password }, { ip: '198.51.100.1' }),
    ).rejects.toMatchObject({ ...limited, reason: 'login:email' });
  });

  it('checks the limit before any Argon2 work', async () => {
    const t = setup({
      throttle: { 'login:email+ip': { points: 1, durationSeconds: 900 } },
      passwordHashing: { memoryCost: 65536, timeCost: 3 },
    });
    const u = await user(t);
    const timed = async () => {
      const start = performance.now();
      const err = await t.ph.auth.login({ email: u.email, password: 'nope' }).catch((e) => e);
      return { err, ms: performance.now() - start };
    };
    const failed = await timed();
    expect(failed.err).toMatchObject(bad);
    const refused = await timed();
    expect(refused.err).toMatchObject(limited);
    // A verify at 64 MiB / t=3 is slow; a refused call does none of it.
    expect(refused.ms).toBeLessThan(failed.ms / 4);
  });

  it('a successful login clears the failure count of the email', async () => {
    const t = setup();
    const u = await user(t);
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 9; i++)
        await expect(t.ph.auth.login({ email: u.email, password: 'nope' })).rejects.toMatchObject(bad);
      await t.ph.auth.login({ email: u.email, password: u.password });
    }
  });

  it('limits failed logins per client address across emails (100 per 15 min), IPv6 per /64', async () => {
    const t = setup({ throttle: { 'login:ip': { points: 3, durationSeconds: 900 } } });
    const u = await user(t);
    for (const ip of ['2001:db8:1:2::a', '2001:db8:1:2:ffff::1', '2001:0db8:0001:0002::b'])
      await expect(t.ph.auth.login({ email: email(), password: 'nope' }, { ip })).rejects.toMatchObject(bad);
    await expect(
      t.ph.auth.login({ email: u.email, password: u.password }, { ip: '2001:db8:1:2::c' }),
    ).rejects.toMatchObject(limited);
    await t.ph.auth.login({ email: u.email, password: u.password }, { ip: '2001:db8:1:3::c' });
    await t.ph.auth.login({ email: u.email, password: u.password }, { ip: '192.0.2.50' });
  });

  it('limits signups per client address', async () => {
    const t = setup({ throttle: { 'signup:ip': { points: 2, durationSeconds: 3600 } } });
    const ip = '198.51.100.9';
    for (let i = 0; i < 2; i++)
      await t.ph.auth.signup(
        { name: 'N', email: email(), password: 'violet-otter-jumps-gravel-1987' },
        { ip },
      );
    await expect(
      t.ph.auth.signup({ name: 'N', email: email(), password: 'violet-otter-jumps-gravel-1987' }, { ip }),
    ).rejects.toMatchObject(limited);
    t.clock.advance(60 * MIN);
    await t.ph.auth.signup({ name: 'N', email: email(), password: 'violet-otter-jumps-gravel-1987' }, { ip });
  });

  it('limits forgot per client address: over it the answer stays 202, no mail goes out and no email is counted', async () => {
    const t = setup({ throttle: { 'forgot:ip': { points: 2, durationSeconds: 900 } } });
    const u = await user(t);
    const ip = '203.0.113.77';
    for (let i = 0; i < 2; i++)
      expect(await t.ph.auth.forgot({ email: email() }, { ip })).toEqual({ accepted: true });
    const counted = async () =>
      (await t.stores.limiter.get(`forgot:email:${u.email}`, t.clock.now()))?.points ?? 0;
    expect(await t.ph.auth.forgot({ email: u.email }, { ip })).toEqual({ accepted: true });
    expect(await counted()).toBe(0);
    // Another address is not limited by this one, and gets its mail.
    await t.ph.auth.forgot({ email: u.email }, { ip: '203.0.113.78' });
    await t.mailer.waitFor(u.email, (m) => /reset code/i.test(m.subject));
    expect(await counted()).toBe(1);
    expect(t.mailer.mails.filter((m) => m.to === u.email)).toHaveLength(1);
  });

  it('counts failed reset codes per address', async () => {
    const t = setup({ throttle: { 'code:ip': { points: 2, durationSeconds: 900 } } });
    const ip = '203.0.113.4';
    for (let i = 0; i < 2; i++)
      await expect(
        t.ph.auth.forgotReset({ code: `nope-${i}`, password: 'violet-otter-jumps-gravel-1987' }, { ip }),
      ).rejects.toMatchObject({ code: 'invalid_code' });
    await expect(
      t.ph.auth.forgotReset({ code: 'nope', password: 'violet-otter-jumps-gravel-1987' }, { ip }),
    ).rejects.toMatchObject(limited);
  });

  it('refuses (fails closed) when the limiter store is down', async () => {
    const clock = new TestClock();
    const stores = memoryStores({ clock });
    const down: LimiterStore = {
      consume: () => Promise.reject(new StoreError('limiter down')),
      consumeMany: () => Promise.reject(new StoreError('limiter down')),
      settle: () => Promise.reject(new StoreError('limiter down')),
      get: () => Promise.reject(new StoreError('limiter down')),
      delete: () => Promise.reject(new StoreError('limiter down')),
    };
    const t = setup({}, { stores: { ...stores, limiter: down }, clock });
    await expect(
      t.ph.auth.login({ email: email(), password: 'whatever-123' }, { ip: '192.0.2.1' }),
    ).rejects.toBeInstanceOf(StoreError);
    expect(t.log.lines.some((e) => e.fields.event === 'limiter_unavailable')).toBe(true);
  });

  it('answers 503 unavailable with Retry-After over HTTP when the limiter store is down', async () => {
    const clock = new TestClock();
    const stores = memoryStores({ clock });
    const down: LimiterStore = {
      consume: () => Promise.reject(new StoreError('limiter down')),
      consumeMany: () => Promise.reject(new StoreError('limiter down')),
      settle: () => Promise.reject(new StoreError('limiter down')),
      get: () => Promise.reject(new StoreError('limiter down')),
      delete: () => Promise.reject(new StoreError('limiter down')),
    };
    const t = setup({}, { stores: { ...stores, limiter: down }, clock });
    const res = await t.ph.handle({
      method: 'POST',
      path: '/auth/login',
      headers: { 'content-type': 'application/json' },
      body: Buffer.from(JSON.stringify({ email: email(), password: 'whatever-123' })),
      ip: '192.0.2.1',
    });
    expect(res).toMatchObject({ status: 503, headers: { 'retry-after': '1' } });
    expect(JSON.parse(String(res!.body))).toMatchObject({ code: 'unavailable' });
  });
});
