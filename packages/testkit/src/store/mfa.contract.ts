import { randomBytes, randomUUID } from 'node:crypto';
import type { PendingLogin, SealedSecret, StoredWebAuthnCredential, Stores } from '@postern/core/ports';
import { describe, expect, it } from 'vitest';
import type { StoreSetup } from './setup.js';

const MIN = 60_000;
const id = () => randomUUID();
const sealed = (): SealedSecret => ({
  kid: 'k1',
  iv: randomBytes(12).toString('base64url'),
  data: randomBytes(36).toString('base64url'),
});

function pendingLogin(now: Date, over: Partial<PendingLogin> = {}): PendingLogin {
  return {
    jti: id(),
    userId: id(),
    refresh: true,
    methods: ['totp', 'email'],
    createdAt: now,
    expiresAt: new Date(now.getTime() + 5 * MIN),
    failures: 0,
    sends: 0,
    lastSentAt: null,
    ...over,
  };
}

function credential(userId: string, now: Date, over: Partial<StoredWebAuthnCredential> = {}) {
  return {
    id: randomBytes(16).toString('base64url'),
    userId,
    publicKey: new Uint8Array(randomBytes(77)),
    counter: 0,
    transports: ['internal', 'hybrid'],
    name: 'Laptop',
    deviceType: 'multiDevice',
    backedUp: true,
    createdAt: now,
    lastUsedAt: null,
    ...over,
  } satisfies StoredWebAuthnCredential;
}

/** A user with one of every kind of MFA data; `left` reads back what of it the stores still hold. */
async function userWithMfaData(stores: Stores, now: Date) {
  const userId = id();
  await stores.users.create({
    id: userId,
    email: `mfa-${userId}@example.test`,
    name: 'Ada Lovelace',
    passwordHash: '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA',
    roles: [],
    emailVerified: true,
    disabled: false,
    createdAt: now,
    passwordChangedAt: now,
  });
  const later = new Date(now.getTime() + 5 * MIN);
  await stores.mfaFactors.enableFactor({
    userId,
    type: 'totp',
    enabledAt: now,
    secret: sealed(),
    lastStep: 1,
  });
  await stores.mfaFactors.enableFactor({ userId, type: 'email', enabledAt: now });
  await stores.mfaFactors.savePendingTotp({ userId, secret: sealed(), expiresAt: later });
  const p = pendingLogin(now, { userId });
  await stores.pendingLogins.create(p);
  const code = { userId, codeHash: 'a'.repeat(64), createdAt: now, expiresAt: later };
  await stores.emailCodes.put({ ...code, key: `enrol:${userId}` });
  await stores.emailCodes.put({ ...code, key: `login:${p.jti}` });
  await stores.recoveryCodes.replaceAll(userId, [
    { id: id(), userId, selector: 'S0XX', hash: '$argon2id$v=19$m=19456,t=2,p=1$0', createdAt: now },
  ]);
  const c = credential(userId, now);
  await stores.webauthnCredentials.addCredential(c);
  const ch = { userId, challenge: randomBytes(32).toString('base64url'), expiresAt: later };
  await stores.webauthnChallenges.putChallenge({ ...ch, purpose: 'register', subject: userId });
  await stores.webauthnChallenges.putChallenge({ ...ch, purpose: 'authenticate', subject: p.jti });

  return {
    userId,
    /** Counts of what is left (challenges are taken: read this once). */
    async left(at: Date) {
      const taken = await Promise.all([
        stores.webauthnChallenges.takeChallenge('register', userId, at),
        stores.webauthnChallenges.takeChallenge('authenticate', p.jti, at),
      ]);
      return {
        factors: (await stores.mfaFactors.listFactors(userId)).length,
        pendingTotp: (await stores.mfaFactors.getPendingTotp(userId, at)) !== null,
        pendingLogin: (await stores.pendingLogins.get(p.jti, at)) !== null,
        emailCodes: [
          await stores.emailCodes.has(`enrol:${userId}`, at),
          await stores.emailCodes.has(`login:${p.jti}`, at),
        ].filter(Boolean).length,
        recoveryCodes: (await stores.recoveryCodes.listUnused(userId)).length,
        credentials: (await stores.webauthnCredentials.listCredentials(userId)).length,
        credentialById: (await stores.webauthnCredentials.getCredential(c.id)) !== null,
        challenges: taken.filter((x) => x !== null).length,
      };
    },
  };
}

/** Contract of the MFA ports: races with exactly one winner, expiry under a moved clock. */
export function mfaStoreContract(setup: StoreSetup): void {
  describe('MFA stores', () => {
    describe('pending logins', () => {
      it('get returns the stored pending login with every field', async () => {
        const { stores, clock } = await setup();
        const p = pendingLogin(clock.now());
        await stores.pendingLogins.create(p);
        expect(await stores.pendingLogins.get(p.jti, clock.now())).toEqual(p);
        expect(await stores.pendingLogins.get(id(), clock.now())).toBeNull();
      });

      it("keeps the login's refresh wish: none, a token, or the browser-session cookie", async () => {
        const { stores, clock } = await setup();
        for (const refresh of [false, true, 'cookie'] as const) {
          const p = pendingLogin(clock.now(), { refresh });
          await stores.pendingLogins.create(p);
          expect((await stores.pendingLogins.get(p.jti, clock.now()))?.refresh).toBe(refresh);
          expect((await stores.pendingLogins.consume(p.jti, clock.now()))?.refresh).toBe(refresh);
        }
      });

      it('get returns null once the pending login has expired under a moved clock', async () => {
        const { stores, clock } = await setup();
        const p = pendingLogin(clock.now());
        await stores.pendingLogins.create(p);
        clock.advance(5 * MIN - 1000);
        expect(await stores.pendingLogins.get(p.jti, clock.now())).not.toBeNull();
        clock.advance(1000);
        expect(await stores.pendingLogins.get(p.jti, clock.now())).toBeNull();
        expect(await stores.pendingLogins.consume(p.jti, clock.now())).toBeNull();
      });

      it('consume hands a pending login to exactly one of many concurrent callers', async () => {
        const { stores, clock } = await setup();
        const p = pendingLogin(clock.now());
        await stores.pendingLogins.create(p);
        const results = await Promise.all(
          Array.from({ length: 10 }, () => stores.pendingLogins.consume(p.jti, clock.now())),
        );
        expect(results.filter((r) => r !== null)).toHaveLength(1);
        expect(results.find((r) => r !== null)?.userId).toBe(p.userId);
        expect(await stores.pendingLogins.get(p.jti, clock.now())).toBeNull();
      });

      it('recordFailure counts concurrent failures exactly and kills the pending login at the limit', async () => {
        const { stores, clock } = await setup();
        const p = pendingLogin(clock.now());
        await stores.pendingLogins.create(p);
        const counts = await Promise.all(
          Array.from({ length: 4 }, () => stores.pendingLogins.recordFailure(p.jti, 5, clock.now())),
        );
        expect([...counts].sort()).toEqual([1, 2, 3, 4]);
        expect((await stores.pendingLogins.get(p.jti, clock.now()))?.failures).toBe(4);
        expect(await stores.pendingLogins.recordFailure(p.jti, 5, clock.now())).toBe(5);
        expect(await stores.pendingLogins.get(p.jti, clock.now())).toBeNull();
        expect(await stores.pendingLogins.recordFailure(p.jti, 5, clock.now())).toBeNull();
      });

      it('claimSend enforces the cooldown and the maximum, atomically', async () => {
        const { stores, clock } = await setup();
        const p = pendingLogin(clock.now(), { expiresAt: new Date(clock.now().getTime() + 60 * MIN) });
        await stores.pendingLogins.create(p);
        const limits = { cooldownSeconds: 30, maxSends: 3 };
        const first = await Promise.all(
          Array.from({ length: 5 }, () => stores.pendingLogins.claimSend(p.jti, clock.now(), limits)),
        );
        expect(first.filter((r) => r?.ok)).toHaveLength(1);
        const refused = first.find((r) => r && !r.ok);
        expect(refused).toMatchObject({ ok: false, reason: 'cooldown' });
        expect(refused && !refused.ok && refused.retryAfterSeconds).toBeGreaterThan(0);
        clock.advance(29_000);
        expect(await stores.pendingLogins.claimSend(p.jti, clock.now(), limits)).toMatchObject({ ok: false });
        clock.advance(1000);
        expect(await stores.pendingLogins.claimSend(p.jti, clock.now(), limits)).toEqual({
          ok: true,
          sends: 2,
        });
        clock.advance(30_000);
        expect(await stores.pendingLogins.claimSend(p.jti, clock.now(), limits)).toEqual({
          ok: true,
          sends: 3,
        });
        clock.advance(30_000);
        expect(await stores.pendingLogins.claimSend(p.jti, clock.now(), limits)).toMatchObject({
          ok: false,
          reason: 'exhausted',
        });
        expect(await stores.pendingLogins.claimSend(id(), clock.now(), limits)).toBeNull();
      });

      it('voidForUser deletes every pending login of that user and no other', async () => {
        const { stores, clock } = await setup();
        const userId = id();
        const a = pendingLogin(clock.now(), { userId });
        const b = pendingLogin(clock.now(), { userId });
        const other = pendingLogin(clock.now());
        for (const p of [a, b, other]) await stores.pendingLogins.create(p);
        expect(await stores.pendingLogins.voidForUser(userId)).toBe(2);
        expect(await stores.pendingLogins.get(a.jti, clock.now())).toBeNull();
        expect(await stores.pendingLogins.get(b.jti, clock.now())).toBeNull();
        expect(await stores.pendingLogins.get(other.jti, clock.now())).not.toBeNull();
      });
    });

    describe('email codes', () => {
      const code = (key: string, now: Date, hash = 'a'.repeat(64)) => ({
        key,
        userId: id(),
        codeHash: hash,
        createdAt: now,
        expiresAt: new Date(now.getTime() + 10 * MIN),
      });

      it('consume succeeds once for the right hash and leaves the code for a wrong one', async () => {
        const { stores, clock } = await setup();
        const key = `login:${id()}`;
        await stores.emailCodes.put(code(key, clock.now(), 'b'.repeat(64)));
        expect(await stores.emailCodes.consume(key, 'c'.repeat(64), clock.now())).toBe(false);
        expect(await stores.emailCodes.has(key, clock.now())).toBe(true);
        const results = await Promise.all(
          Array.from({ length: 8 }, () => stores.emailCodes.consume(key, 'b'.repeat(64), clock.now())),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
        expect(await stores.emailCodes.has(key, clock.now())).toBe(false);
      });

      it('matches checks the hash and liveness without using the code', async () => {
        const { stores, clock } = await setup();
        const key = `login:${id()}`;
        await stores.emailCodes.put(code(key, clock.now(), 'b'.repeat(64)));
        expect(await stores.emailCodes.matches(key, 'c'.repeat(64), clock.now())).toBe(false);
        expect(await stores.emailCodes.matches(`login:${id()}`, 'b'.repeat(64), clock.now())).toBe(false);
        const results = await Promise.all(
          Array.from({ length: 4 }, () => stores.emailCodes.matches(key, 'b'.repeat(64), clock.now())),
        );
        expect(results).toEqual([true, true, true, true]);
        expect(await stores.emailCodes.consume(key, 'b'.repeat(64), clock.now())).toBe(true);
        expect(await stores.emailCodes.matches(key, 'b'.repeat(64), clock.now())).toBe(false);
        await stores.emailCodes.put(code(key, clock.now(), 'd'.repeat(64)));
        clock.advance(10 * MIN);
        expect(await stores.emailCodes.matches(key, 'd'.repeat(64), clock.now())).toBe(false);
      });

      it('put replaces the earlier code under the same key', async () => {
        const { stores, clock } = await setup();
        const key = `login:${id()}`;
        await stores.emailCodes.put(code(key, clock.now(), '1'.repeat(64)));
        await stores.emailCodes.put(code(key, clock.now(), '2'.repeat(64)));
        expect(await stores.emailCodes.consume(key, '1'.repeat(64), clock.now())).toBe(false);
        expect(await stores.emailCodes.consume(key, '2'.repeat(64), clock.now())).toBe(true);
      });

      it('a code is dead after its expiry under a moved clock', async () => {
        const { stores, clock } = await setup();
        const key = `enrol:${id()}`;
        await stores.emailCodes.put(code(key, clock.now()));
        clock.advance(10 * MIN);
        expect(await stores.emailCodes.has(key, clock.now())).toBe(false);
        expect(await stores.emailCodes.consume(key, 'a'.repeat(64), clock.now())).toBe(false);
      });

      it('delete removes the code', async () => {
        const { stores, clock } = await setup();
        const key = `enrol:${id()}`;
        await stores.emailCodes.put(code(key, clock.now()));
        await stores.emailCodes.delete(key);
        expect(await stores.emailCodes.has(key, clock.now())).toBe(false);
      });
    });

    describe('recovery codes', () => {
      const set = (userId: string, now: Date, n = 3) =>
        Array.from({ length: n }, (_, i) => ({
          id: id(),
          userId,
          selector: `S${i}XX`,
          hash: `$argon2id$v=19$m=19456,t=2,p=1$${i}`,
          createdAt: now,
        }));

      it('use succeeds for exactly one of many concurrent callers', async () => {
        const { stores, clock } = await setup();
        const userId = id();
        const codes = set(userId, clock.now());
        await stores.recoveryCodes.replaceAll(userId, codes);
        const results = await Promise.all(
          Array.from({ length: 8 }, () => stores.recoveryCodes.use(userId, codes[1]!.id)),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
        const left = await stores.recoveryCodes.listUnused(userId);
        expect(left.map((c) => c.id).sort()).toEqual([codes[0]!.id, codes[2]!.id].sort());
        expect(left.find((c) => c.id === codes[0]!.id)).toEqual(codes[0]);
      });

      it('use refuses another user’s code', async () => {
        const { stores, clock } = await setup();
        const userId = id();
        const codes = set(userId, clock.now());
        await stores.recoveryCodes.replaceAll(userId, codes);
        expect(await stores.recoveryCodes.use(id(), codes[0]!.id)).toBe(false);
        expect(await stores.recoveryCodes.listUnused(userId)).toHaveLength(3);
      });

      it('replaceAll kills the old set and deleteAll empties it', async () => {
        const { stores, clock } = await setup();
        const userId = id();
        const old = set(userId, clock.now());
        await stores.recoveryCodes.replaceAll(userId, old);
        const fresh = set(userId, clock.now(), 10);
        await stores.recoveryCodes.replaceAll(userId, fresh);
        expect(await stores.recoveryCodes.use(userId, old[0]!.id)).toBe(false);
        expect(await stores.recoveryCodes.listUnused(userId)).toHaveLength(10);
        await stores.recoveryCodes.deleteAll(userId);
        expect(await stores.recoveryCodes.listUnused(userId)).toEqual([]);
      });

      it('addIfNone stores one set of many concurrent ones, and none over existing codes', async () => {
        const { stores, clock } = await setup();
        const userId = id();
        const sets = Array.from({ length: 6 }, () => set(userId, clock.now()));
        const stored = await Promise.all(sets.map((s) => stores.recoveryCodes.addIfNone(userId, s)));
        expect(stored.filter(Boolean)).toHaveLength(1);
        const winner = sets[stored.indexOf(true)]!;
        expect((await stores.recoveryCodes.listUnused(userId)).map((c) => c.id)).toEqual(
          winner.map((c) => c.id),
        );
        expect(await stores.recoveryCodes.addIfNone(userId, set(userId, clock.now()))).toBe(false);
        await stores.recoveryCodes.deleteAll(userId);
        expect(await stores.recoveryCodes.addIfNone(userId, sets[0]!)).toBe(true);
        expect(await stores.recoveryCodes.listUnused(userId)).toHaveLength(3);
      });
    });

    describe('factors', () => {
      it('enable, get, list and remove a factor', async () => {
        const { stores, clock } = await setup();
        const userId = id();
        const totp = { userId, type: 'totp' as const, enabledAt: clock.now(), secret: sealed(), lastStep: 7 };
        await stores.mfaFactors.enableFactor(totp);
        await stores.mfaFactors.enableFactor({ userId, type: 'email', enabledAt: clock.now() });
        expect(await stores.mfaFactors.getFactor(userId, 'totp')).toEqual(totp);
        expect((await stores.mfaFactors.listFactors(userId)).map((f) => f.type).sort()).toEqual([
          'email',
          'totp',
        ]);
        expect(await stores.mfaFactors.listFactors(id())).toEqual([]);
        expect(await stores.mfaFactors.removeFactor(userId, 'email')).toBe(true);
        expect(await stores.mfaFactors.removeFactor(userId, 'email')).toBe(false);
        expect(await stores.mfaFactors.getFactor(userId, 'email')).toBeNull();
      });

      it('listMethods names each active factor once and webauthn once for any number of credentials', async () => {
        const { stores, clock } = await setup();
        const userId = id();
        expect(await stores.mfaFactors.listMethods(userId)).toEqual([]);
        await stores.webauthnCredentials.addCredential(credential(userId, clock.now()));
        await stores.webauthnCredentials.addCredential(credential(userId, clock.now(), { name: 'Phone' }));
        expect(await stores.mfaFactors.listMethods(userId)).toEqual(['webauthn']);
        await stores.mfaFactors.enableFactor({ userId, type: 'email', enabledAt: clock.now() });
        await stores.mfaFactors.enableFactor({
          userId,
          type: 'totp',
          enabledAt: clock.now(),
          secret: sealed(),
        });
        // Another user's factors and credentials are not this one's.
        await stores.webauthnCredentials.addCredential(credential(id(), clock.now()));
        expect((await stores.mfaFactors.listMethods(userId)).sort()).toEqual(['email', 'totp', 'webauthn']);
        const other = id();
        await stores.mfaFactors.enableFactor({ userId: other, type: 'email', enabledAt: clock.now() });
        expect(await stores.mfaFactors.listMethods(other)).toEqual(['email']);
      });

      it('acceptTotpStep lets exactly one concurrent caller take a step, and never an older one', async () => {
        const { stores, clock } = await setup();
        const userId = id();
        await stores.mfaFactors.enableFactor({
          userId,
          type: 'totp',
          enabledAt: clock.now(),
          secret: sealed(),
          lastStep: 100,
        });
        const results = await Promise.all(
          Array.from({ length: 8 }, () => stores.mfaFactors.acceptTotpStep(userId, 101)),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
        expect(await stores.mfaFactors.acceptTotpStep(userId, 101)).toBe(false);
        expect(await stores.mfaFactors.acceptTotpStep(userId, 100)).toBe(false);
        expect(await stores.mfaFactors.acceptTotpStep(userId, 103)).toBe(true);
        expect(await stores.mfaFactors.acceptTotpStep(userId, 102)).toBe(false);
        expect((await stores.mfaFactors.getFactor(userId, 'totp'))?.lastStep).toBe(103);
        expect(await stores.mfaFactors.acceptTotpStep(id(), 1)).toBe(false);
      });

      it('a pending TOTP seed is confirmed once, then is gone', async () => {
        const { stores, clock } = await setup();
        const userId = id();
        const secret = sealed();
        await stores.mfaFactors.savePendingTotp({
          userId,
          secret,
          expiresAt: new Date(clock.now().getTime() + MIN),
        });
        expect(await stores.mfaFactors.getPendingTotp(userId, clock.now())).toEqual({
          userId,
          secret,
          expiresAt: new Date(clock.now().getTime() + MIN),
        });
        const results = await Promise.all(
          Array.from({ length: 5 }, () =>
            stores.mfaFactors.confirmPendingTotp(userId, secret, 42, clock.now()),
          ),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
        expect(await stores.mfaFactors.getPendingTotp(userId, clock.now())).toBeNull();
        const active = await stores.mfaFactors.getFactor(userId, 'totp');
        expect(active).toMatchObject({ userId, type: 'totp', secret, lastStep: 42 });
        expect(await stores.mfaFactors.acceptTotpStep(userId, 42)).toBe(false);
      });

      it('a newer pending seed replaces the older one and an active factor stays until confirm', async () => {
        const { stores, clock } = await setup();
        const userId = id();
        const active = sealed();
        await stores.mfaFactors.enableFactor({
          userId,
          type: 'totp',
          enabledAt: clock.now(),
          secret: active,
          lastStep: 1,
        });
        const first = sealed();
        const second = sealed();
        const expiresAt = new Date(clock.now().getTime() + MIN);
        await stores.mfaFactors.savePendingTotp({ userId, secret: first, expiresAt });
        await stores.mfaFactors.savePendingTotp({ userId, secret: second, expiresAt });
        expect((await stores.mfaFactors.getFactor(userId, 'totp'))?.secret).toEqual(active);
        expect(await stores.mfaFactors.confirmPendingTotp(userId, first, 5, clock.now())).toBe(false);
        expect(await stores.mfaFactors.confirmPendingTotp(userId, second, 5, clock.now())).toBe(true);
        expect((await stores.mfaFactors.getFactor(userId, 'totp'))?.secret).toEqual(second);
      });

      it('a pending seed cannot be confirmed after its expiry under a moved clock', async () => {
        const { stores, clock } = await setup();
        const userId = id();
        const secret = sealed();
        await stores.mfaFactors.savePendingTotp({
          userId,
          secret,
          expiresAt: new Date(clock.now().getTime() + MIN),
        });
        clock.advance(MIN);
        expect(await stores.mfaFactors.getPendingTotp(userId, clock.now())).toBeNull();
        expect(await stores.mfaFactors.confirmPendingTotp(userId, secret, 1, clock.now())).toBe(false);
        expect(await stores.mfaFactors.getFactor(userId, 'totp')).toBeNull();
      });
    });

    describe('WebAuthn credentials', () => {
      it('stores several credentials per user and returns them with every field', async () => {
        const { stores, clock } = await setup();
        const userId = id();
        const a = credential(userId, clock.now());
        clock.advance(1000);
        const b = credential(userId, clock.now(), { name: 'Phone', transports: [] });
        await stores.webauthnCredentials.addCredential(a);
        await stores.webauthnCredentials.addCredential(b);
        await stores.webauthnCredentials.addCredential(credential(id(), clock.now()));
        const list = await stores.webauthnCredentials.listCredentials(userId);
        expect(list).toEqual([a, b]);
        expect(list[0]!.publicKey).toBeInstanceOf(Uint8Array);
        expect(await stores.webauthnCredentials.getCredential(a.id)).toEqual(a);
        expect(await stores.webauthnCredentials.getCredential('nope')).toBeNull();
      });

      it('addCredential refuses a credential id that is already registered', async () => {
        const { stores, clock } = await setup();
        const a = credential(id(), clock.now());
        expect(await stores.webauthnCredentials.addCredential(a)).toBe(true);
        expect(await stores.webauthnCredentials.addCredential({ ...a, userId: id() })).toBe(false);
        expect((await stores.webauthnCredentials.getCredential(a.id))?.userId).toBe(a.userId);
      });

      it('updateCounter is a compare-and-set with exactly one winner', async () => {
        const { stores, clock } = await setup();
        const a = credential(id(), clock.now(), { counter: 5 });
        await stores.webauthnCredentials.addCredential(a);
        const results = await Promise.all(
          Array.from({ length: 6 }, () => stores.webauthnCredentials.updateCounter(a.id, 5, 6, clock.now())),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
        const after = await stores.webauthnCredentials.getCredential(a.id);
        expect(after?.counter).toBe(6);
        expect(after?.lastUsedAt).toEqual(clock.now());
        expect(await stores.webauthnCredentials.updateCounter('nope', 0, 1, clock.now())).toBe(false);
      });

      it('removes one credential only for its owner, or all of a user', async () => {
        const { stores, clock } = await setup();
        const userId = id();
        const a = credential(userId, clock.now());
        const b = credential(userId, clock.now());
        await stores.webauthnCredentials.addCredential(a);
        await stores.webauthnCredentials.addCredential(b);
        expect(await stores.webauthnCredentials.removeCredential(id(), a.id)).toBe(false);
        expect(await stores.webauthnCredentials.removeCredential(userId, a.id)).toBe(true);
        expect(await stores.webauthnCredentials.removeCredential(userId, a.id)).toBe(false);
        expect(await stores.webauthnCredentials.removeAllCredentials(userId)).toBe(1);
        expect(await stores.webauthnCredentials.listCredentials(userId)).toEqual([]);
      });
    });

    describe('deleting the user', () => {
      it('takes every piece of the user’s MFA data with it, and nothing of another user', async () => {
        const { stores, clock } = await setup();
        const gone = await userWithMfaData(stores, clock.now());
        const kept = await userWithMfaData(stores, clock.now());
        expect(await stores.users.delete(gone.userId)).toBe(true);
        expect(await gone.left(clock.now())).toEqual({
          factors: 0,
          pendingTotp: false,
          pendingLogin: false,
          emailCodes: 0,
          recoveryCodes: 0,
          credentials: 0,
          credentialById: false,
          challenges: 0,
        });
        expect(await kept.left(clock.now())).toEqual({
          factors: 2,
          pendingTotp: true,
          pendingLogin: true,
          emailCodes: 2,
          recoveryCodes: 1,
          credentials: 1,
          credentialById: true,
          challenges: 2,
        });
      });
    });

    describe('WebAuthn challenges', () => {
      const challenge = (now: Date, over = {}) => ({
        purpose: 'authenticate' as const,
        subject: id(),
        userId: id(),
        challenge: randomBytes(32).toString('base64url'),
        expiresAt: new Date(now.getTime() + 5 * MIN),
        ...over,
      });

      it('takeChallenge hands a challenge to exactly one of many concurrent callers', async () => {
        const { stores, clock } = await setup();
        const ch = challenge(clock.now());
        await stores.webauthnChallenges.putChallenge(ch);
        const results = await Promise.all(
          Array.from({ length: 6 }, () =>
            stores.webauthnChallenges.takeChallenge('authenticate', ch.subject, clock.now()),
          ),
        );
        expect(results.filter((r) => r !== null)).toEqual([ch]);
      });

      it('a challenge is bound to its purpose and is replaced by a newer one', async () => {
        const { stores, clock } = await setup();
        const ch = challenge(clock.now(), { purpose: 'register' });
        await stores.webauthnChallenges.putChallenge(ch);
        expect(
          await stores.webauthnChallenges.takeChallenge('authenticate', ch.subject, clock.now()),
        ).toBeNull();
        const newer = { ...ch, challenge: randomBytes(32).toString('base64url') };
        await stores.webauthnChallenges.putChallenge(newer);
        expect(await stores.webauthnChallenges.takeChallenge('register', ch.subject, clock.now())).toEqual(
          newer,
        );
      });

      it('an expired challenge is never handed out', async () => {
        const { stores, clock } = await setup();
        const ch = challenge(clock.now());
        await stores.webauthnChallenges.putChallenge(ch);
        clock.advance(5 * MIN);
        expect(
          await stores.webauthnChallenges.takeChallenge('authenticate', ch.subject, clock.now()),
        ).toBeNull();
      });
    });
  });
}
