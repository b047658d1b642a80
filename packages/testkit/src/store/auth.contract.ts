import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Session, User } from '@postern/core/ports';
import { describe, expect, it } from 'vitest';
import type { StoreSetup } from './setup.js';

const MIN = 60_000;
const DAY = 24 * 60 * MIN;
const id = () => randomUUID();
const hash = () => createHash('sha256').update(randomBytes(32)).digest('base64url');
const at = (d: Date, ms: number) => new Date(d.getTime() + ms);

function newUser(now: Date, over: Partial<User> = {}): User {
  return {
    id: id(),
    email: `user-${id()}@example.test`,
    name: 'Ada Lovelace',
    passwordHash: '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA',
    roles: ['user'],
    emailVerified: false,
    disabled: false,
    createdAt: now,
    passwordChangedAt: now,
    ...over,
  };
}

function newSession(now: Date, over: Partial<Session> = {}): Session {
  return {
    id: id(),
    userId: id(),
    createdAt: now,
    expiresAt: at(now, 30 * DAY),
    idleExpiresAt: at(now, 7 * DAY),
    lastUsedAt: now,
    authTime: now,
    amr: ['pwd'],
    ip: '192.0.2.7',
    userAgent: 'contract-test',
    endedAt: null,
    endReason: null,
    ...over,
  };
}

/** Contract of the auth ports: uniqueness, rotation and consumption races with exactly one
 *  winner, the ended-session feed, and expiry under a moved clock. */
export function authStoreContract(setup: StoreSetup): void {
  describe('auth stores', () => {
    describe('users', () => {
      it('create stores every field and both lookups return it', async () => {
        const { stores, clock } = await setup();
        const u = newUser(clock.now(), { roles: ['user', 'admin'] });
        expect(await stores.users.create(u)).toEqual(u);
        expect(await stores.users.findById(u.id)).toEqual(u);
        expect(await stores.users.findByEmail(u.email)).toEqual(u);
        expect(await stores.users.findById(id())).toBeNull();
        expect(await stores.users.findByEmail(`nobody-${id()}@example.test`)).toBeNull();
      });

      it('create returns null for an email already registered and keeps the first account', async () => {
        const { stores, clock } = await setup();
        const u = newUser(clock.now());
        await stores.users.create(u);
        expect(await stores.users.create(newUser(clock.now(), { email: u.email, name: 'Other' }))).toBeNull();
        expect((await stores.users.findByEmail(u.email))?.id).toBe(u.id);
      });

      it('create lets exactly one of many concurrent signups with one email win', async () => {
        const { stores, clock } = await setup();
        const email = `race-${id()}@example.test`;
        const results = await Promise.all(
          Array.from({ length: 10 }, () => stores.users.create(newUser(clock.now(), { email }))),
        );
        expect(results.filter((r) => r !== null)).toHaveLength(1);
      });

      it('setPassword replaces the hash, and with ifHash only when it still matches', async () => {
        const { stores, clock } = await setup();
        const u = newUser(clock.now());
        await stores.users.create(u);
        const later = at(clock.now(), MIN);
        expect(await stores.users.setPassword(u.id, { passwordHash: 'h2', changedAt: later })).toBe(true);
        expect(await stores.users.findById(u.id)).toMatchObject({
          passwordHash: 'h2',
          passwordChangedAt: later,
        });
        expect(
          await stores.users.setPassword(u.id, { passwordHash: 'h3', changedAt: later, ifHash: 'h1' }),
        ).toBe(false);
        expect((await stores.users.findById(u.id))?.passwordHash).toBe('h2');
        expect(
          await stores.users.setPassword(u.id, { passwordHash: 'h3', changedAt: later, ifHash: 'h2' }),
        ).toBe(true);
        expect((await stores.users.findById(u.id))?.passwordHash).toBe('h3');
        expect(await stores.users.setPassword(id(), { passwordHash: 'x', changedAt: later })).toBe(false);
      });

      it('compare-and-set lets exactly one of many concurrent password changes win', async () => {
        const { stores, clock } = await setup();
        const u = newUser(clock.now());
        await stores.users.create(u);
        const results = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            stores.users.setPassword(u.id, {
              passwordHash: `n${i}`,
              changedAt: clock.now(),
              ifHash: u.passwordHash,
            }),
          ),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
      });

      it('findByIdSettled waits for a transaction changing the user and reads what it committed', async () => {
        const { stores, clock } = await setup();
        const u = newUser(clock.now());
        await stores.users.create(u);
        const later = at(clock.now(), MIN);
        let changed!: () => void;
        const inFlight = new Promise<void>((r) => {
          changed = r;
        });
        let commit!: () => void;
        const held = new Promise<void>((r) => {
          commit = r;
        });
        const tx = stores.transaction(async (t) => {
          await t.users.setPassword(u.id, { passwordHash: 'h-new', changedAt: later });
          changed();
          await held;
        });
        await inFlight;
        // A plain read may see the old row meanwhile; the settled one must not.
        const settled = stores.users.findByIdSettled(u.id);
        setTimeout(commit, 50);
        await tx;
        expect(await settled).toMatchObject({ passwordHash: 'h-new', passwordChangedAt: later });
        expect(await stores.users.findByIdSettled(id())).toBeNull();
      });

      it('setDisabled, setRoles and markEmailVerified change the user and report absence', async () => {
        const { stores, clock } = await setup();
        const u = newUser(clock.now());
        await stores.users.create(u);
        expect(await stores.users.setDisabled(u.id, true)).toBe(true);
        // True for a user that exists, changed or not (deleteUser disables an already disabled one).
        expect(await stores.users.setDisabled(u.id, true)).toBe(true);
        expect(await stores.users.setRoles(u.id, ['admin'])).toBe(true);
        expect(await stores.users.markEmailVerified(u.id)).toBe(true);
        expect(await stores.users.findById(u.id)).toMatchObject({
          disabled: true,
          roles: ['admin'],
          emailVerified: true,
        });
        expect(await stores.users.setDisabled(u.id, false)).toBe(true);
        expect((await stores.users.findById(u.id))?.disabled).toBe(false);
        expect(await stores.users.setDisabled(id(), true)).toBe(false);
        expect(await stores.users.setRoles(id(), [])).toBe(false);
        expect(await stores.users.markEmailVerified(id())).toBe(false);
      });

      it('changeEmail moves the lookup to the new address, marks it proven and refuses a taken one', async () => {
        const { stores, clock } = await setup();
        const u = newUser(clock.now());
        const other = newUser(clock.now());
        await stores.users.create(u);
        await stores.users.create(other);
        const next = `moved-${id()}@example.test`;
        expect(await stores.users.changeEmail(u.id, other.email)).toBe('taken');
        expect((await stores.users.findById(u.id))?.email).toBe(u.email);
        expect(await stores.users.changeEmail(u.id, next)).toBe('changed');
        expect(await stores.users.findByEmail(next)).toMatchObject({
          id: u.id,
          email: next,
          emailVerified: true,
        });
        expect(await stores.users.findByEmail(u.email)).toBeNull();
        // The old address is free again; the same address again is no conflict.
        expect(await stores.users.create(newUser(clock.now(), { email: u.email }))).not.toBeNull();
        expect(await stores.users.changeEmail(u.id, next)).toBe('changed');
        expect(await stores.users.changeEmail(id(), `x-${id()}@example.test`)).toBe('absent');
      });

      it('changeEmail answering taken inside a transaction leaves the transaction and its writes intact', async () => {
        const { stores, clock } = await setup();
        const u = newUser(clock.now());
        const other = newUser(clock.now());
        await stores.users.create(u);
        await stores.users.create(other);
        const codeHash = hash();
        const seen = await stores.transaction(async (tx) => {
          await tx.resetCodes.create({
            hash: codeHash,
            userId: u.id,
            email: u.email,
            createdAt: clock.now(),
            expiresAt: at(clock.now(), 30 * MIN),
          });
          expect(await tx.users.changeEmail(u.id, other.email)).toBe('taken');
          return tx.users.findById(u.id);
        });
        expect(seen?.email).toBe(u.email);
        expect(await stores.resetCodes.find(codeHash, clock.now())).not.toBeNull();
      });

      it('changeEmail lets exactly one of many users moving to one address win', async () => {
        const { stores, clock } = await setup();
        const users = Array.from({ length: 6 }, () => newUser(clock.now()));
        for (const u of users) await stores.users.create(u);
        const email = `contested-${id()}@example.test`;
        const results = await Promise.all(users.map((u) => stores.users.changeEmail(u.id, email)));
        expect(results.filter((r) => r === 'changed')).toHaveLength(1);
        expect(results.filter((r) => r === 'taken')).toHaveLength(5);
        const winner = users[results.indexOf('changed')]!;
        expect((await stores.users.findByEmail(email))?.id).toBe(winner.id);
      });

      it('delete removes the user and frees the email', async () => {
        const { stores, clock } = await setup();
        const u = newUser(clock.now());
        await stores.users.create(u);
        expect(await stores.users.delete(u.id)).toBe(true);
        expect(await stores.users.findById(u.id)).toBeNull();
        expect(await stores.users.findByEmail(u.email)).toBeNull();
        expect(await stores.users.delete(u.id)).toBe(false);
        expect(await stores.users.create(newUser(clock.now(), { email: u.email }))).not.toBeNull();
      });
    });

    describe('sessions', () => {
      it('create stores every field; findById and findByToken return the session', async () => {
        const { stores, clock } = await setup();
        const s = newSession(clock.now());
        const t = hash();
        expect(
          await stores.sessions.create(s, { hash: t, idleExpiresAt: s.idleExpiresAt }, { maxPerUser: 50 }),
        ).toEqual([]);
        expect(await stores.sessions.findById(s.id)).toEqual(s);
        expect(await stores.sessions.findByToken(t)).toEqual({ session: s, usedAt: null });
        expect(await stores.sessions.findByToken(hash())).toBeNull();
        expect(await stores.sessions.findById(id())).toBeNull();
      });

      it('a session created without a refresh token has no token to find', async () => {
        const { stores, clock } = await setup();
        const s = newSession(clock.now(), {
          expiresAt: at(clock.now(), 15 * MIN),
          idleExpiresAt: at(clock.now(), 15 * MIN),
        });
        await stores.sessions.create(s, null, { maxPerUser: 50 });
        expect(await stores.sessions.findById(s.id)).toEqual(s);
        expect(await stores.sessions.listForUser(s.userId, clock.now())).toHaveLength(1);
      });

      it('rotate marks the token used, inserts its successor and moves the idle end', async () => {
        const { stores, clock } = await setup();
        const s = newSession(clock.now());
        const t1 = hash();
        await stores.sessions.create(s, { hash: t1, idleExpiresAt: s.idleExpiresAt }, { maxPerUser: 50 });
        clock.advance(MIN);
        const t2 = hash();
        const rotated = await stores.sessions.rotate(
          t1,
          { hash: t2, idleExpiresAt: at(clock.now(), 7 * DAY) },
          clock.now(),
        );
        expect(rotated).toMatchObject({
          id: s.id,
          lastUsedAt: clock.now(),
          idleExpiresAt: at(clock.now(), 7 * DAY),
          expiresAt: s.expiresAt,
          authTime: s.authTime,
        });
        expect(await stores.sessions.findByToken(t1)).toMatchObject({ usedAt: clock.now() });
        expect(await stores.sessions.findByToken(t2)).toMatchObject({ session: { id: s.id }, usedAt: null });
      });

      it('rotate returns null for an already-rotated token (no grace)', async () => {
        const { stores, clock } = await setup();
        const s = newSession(clock.now());
        const t1 = hash();
        await stores.sessions.create(s, { hash: t1, idleExpiresAt: s.idleExpiresAt }, { maxPerUser: 50 });
        const next = () => ({ hash: hash(), idleExpiresAt: at(clock.now(), 7 * DAY) });
        expect(await stores.sessions.rotate(t1, next(), clock.now())).not.toBeNull();
        expect(await stores.sessions.rotate(t1, next(), clock.now())).toBeNull();
        expect(await stores.sessions.rotate(hash(), next(), clock.now())).toBeNull();
      });

      it('rotate keeps a budget per session and window: over it refused until the window ends, the token unused', async () => {
        const { stores, clock } = await setup();
        const s = newSession(clock.now());
        const other = newSession(clock.now());
        let live = hash();
        let otherLive = hash();
        await stores.sessions.create(s, { hash: live, idleExpiresAt: s.idleExpiresAt }, { maxPerUser: 50 });
        await stores.sessions.create(
          other,
          { hash: otherLive, idleExpiresAt: other.idleExpiresAt },
          { maxPerUser: 50 },
        );
        const budget = { rotations: 3, windowSeconds: 60 };
        const windowStart = clock.now();
        const first = live;
        const rotate = async (from: string) => {
          const n = { hash: hash(), idleExpiresAt: at(clock.now(), 7 * DAY) };
          const r = await stores.sessions.rotate(from, n, clock.now(), { budget });
          return r && !('refused' in r) ? n.hash : r;
        };
        for (let i = 0; i < 3; i++) {
          live = (await rotate(live)) as string;
          expect(live).toEqual(expect.any(String));
          clock.advance(10_000);
        }
        // The window began at the first rotation.
        expect(await rotate(live)).toEqual({ refused: 'budget', retryAt: at(windowStart, 60_000) });
        expect(await stores.sessions.findByToken(live)).toMatchObject({
          session: { id: s.id },
          usedAt: null,
        });
        // A rotated token is refused as before (null: the caller takes it for reuse), budget or not.
        expect(await rotate(first)).toBeNull();
        expect(await rotate(hash())).toBeNull();
        // Another session has a budget of its own.
        otherLive = (await rotate(otherLive)) as string;
        expect(otherLive).toEqual(expect.any(String));
        // Past 60 s after the window began, the next rotation starts a new window.
        clock.advance(31_000);
        live = (await rotate(live)) as string;
        expect(live).toEqual(expect.any(String));
        expect(await rotate(live)).toEqual(expect.any(String));
        // A budget past any counter's range is no limit (not an error).
        const huge = { rotations: 2 ** 40, windowSeconds: 2 ** 40 };
        expect(
          await stores.sessions.rotate(
            otherLive,
            { hash: hash(), idleExpiresAt: at(clock.now(), DAY) },
            clock.now(),
            { budget: huge },
          ),
        ).toMatchObject({ id: other.id });
      });

      it('over the budget a grace repeat is refused for the budget too; an older token is still null', async () => {
        const { stores, clock } = await setup();
        const s = newSession(clock.now());
        const t0 = hash();
        await stores.sessions.create(s, { hash: t0, idleExpiresAt: s.idleExpiresAt }, { maxPerUser: 50 });
        const opts = { graceSeconds: 30, budget: { rotations: 2, windowSeconds: 60 } };
        const next = () => ({ hash: hash(), idleExpiresAt: at(clock.now(), 7 * DAY) });
        const t1 = next();
        const t2 = next();
        expect(await stores.sessions.rotate(t0, t1, clock.now(), opts)).toMatchObject({ id: s.id });
        clock.advance(5000);
        expect(await stores.sessions.rotate(t1.hash, t2, clock.now(), opts)).toMatchObject({ id: s.id });
        // t1 is the just-rotated token (a second tab): refused for the budget, not taken for reuse.
        const refused = { refused: 'budget', retryAt: at(clock.now(), 55_000) };
        expect(await stores.sessions.rotate(t1.hash, next(), clock.now(), opts)).toEqual(refused);
        expect(await stores.sessions.rotate(t2.hash, next(), clock.now(), opts)).toEqual(refused);
        // t0 is no grace repeat (t1, rotated out of it, was used): null, budget or not.
        expect(await stores.sessions.rotate(t0, next(), clock.now(), opts)).toBeNull();
        expect(await stores.sessions.findByToken(t2.hash)).toMatchObject({ usedAt: null });
      });

      it('rotate lets exactly one of many concurrent callers with one token win', async () => {
        const { stores, clock } = await setup();
        const s = newSession(clock.now());
        const t1 = hash();
        await stores.sessions.create(s, { hash: t1, idleExpiresAt: s.idleExpiresAt }, { maxPerUser: 50 });
        const nexts = Array.from({ length: 12 }, () => ({
          hash: hash(),
          idleExpiresAt: at(clock.now(), 7 * DAY),
        }));
        const results = await Promise.all(nexts.map((n) => stores.sessions.rotate(t1, n, clock.now())));
        expect(results.filter((r) => r !== null)).toHaveLength(1);
        const winner = nexts[results.findIndex((r) => r !== null)]!;
        expect(await stores.sessions.findByToken(winner.hash)).toMatchObject({ usedAt: null });
        for (const n of nexts.filter((x) => x !== winner))
          expect(await stores.sessions.findByToken(n.hash)).toBeNull();
      });

      it('within the grace window a just-rotated token rotates again into a sibling, after it not', async () => {
        const { stores, clock } = await setup();
        const s = newSession(clock.now());
        const t1 = hash();
        await stores.sessions.create(s, { hash: t1, idleExpiresAt: s.idleExpiresAt }, { maxPerUser: 50 });
        const next = () => ({ hash: hash(), idleExpiresAt: at(clock.now(), 7 * DAY) });
        const a = next();
        expect(await stores.sessions.rotate(t1, a, clock.now(), { graceSeconds: 10 })).not.toBeNull();
        clock.advance(5000);
        const b = next();
        expect(await stores.sessions.rotate(t1, b, clock.now(), { graceSeconds: 10 })).not.toBeNull();
        expect(await stores.sessions.findByToken(a.hash)).toMatchObject({ usedAt: null });
        expect(await stores.sessions.findByToken(b.hash)).toMatchObject({ usedAt: null });
        clock.advance(5001);
        expect(await stores.sessions.rotate(t1, next(), clock.now(), { graceSeconds: 10 })).toBeNull();
      });

      it('grace covers the just-rotated token only: once a later token rotated, an older one is reuse', async () => {
        const { stores, clock } = await setup();
        const s = newSession(clock.now());
        const t0 = hash();
        await stores.sessions.create(s, { hash: t0, idleExpiresAt: s.idleExpiresAt }, { maxPerUser: 50 });
        const next = () => ({ hash: hash(), idleExpiresAt: at(clock.now(), 7 * DAY) });
        const t1 = next();
        expect(await stores.sessions.rotate(t0, t1, clock.now(), { graceSeconds: 10 })).not.toBeNull();
        clock.advance(1000);
        // A third tab with t0: still the just-rotated token (its siblings are unused).
        expect(await stores.sessions.rotate(t0, next(), clock.now(), { graceSeconds: 10 })).not.toBeNull();
        expect(await stores.sessions.rotate(t0, next(), clock.now(), { graceSeconds: 10 })).not.toBeNull();
        clock.advance(1000);
        const t2 = next();
        expect(await stores.sessions.rotate(t1.hash, t2, clock.now(), { graceSeconds: 10 })).not.toBeNull();
        // t1 is now the just-rotated token; t0, two rotations back, is not, inside the window or not.
        expect(await stores.sessions.rotate(t0, next(), clock.now(), { graceSeconds: 10 })).toBeNull();
        expect(
          await stores.sessions.rotate(t1.hash, next(), clock.now(), { graceSeconds: 10 }),
        ).not.toBeNull();
      });

      it('grace follows rotation order, not time: rotations in one millisecond keep it exact', async () => {
        const { stores, clock } = await setup();
        const s = newSession(clock.now());
        const z = hash();
        await stores.sessions.create(s, { hash: z, idleExpiresAt: s.idleExpiresAt }, { maxPerUser: 50 });
        const next = () => ({ hash: hash(), idleExpiresAt: at(clock.now(), 7 * DAY) });
        const a = next();
        const b = next();
        expect(await stores.sessions.rotate(z, a, clock.now(), { graceSeconds: 10 })).not.toBeNull();
        expect(await stores.sessions.rotate(a.hash, b, clock.now(), { graceSeconds: 10 })).not.toBeNull();
        // a is the just-rotated token (b unused); z is not (a, rotated out of it, was used).
        expect(
          await stores.sessions.rotate(a.hash, next(), clock.now(), { graceSeconds: 10 }),
        ).not.toBeNull();
        expect(await stores.sessions.rotate(z, next(), clock.now(), { graceSeconds: 10 })).toBeNull();
      });

      it('a cookie session keeps its kind and the salt of each rotation; a repeat of the just-rotated token within its window answers that salt, rotating nothing', async () => {
        const { stores, clock } = await setup();
        const s = newSession(clock.now(), { cookie: true });
        const t0 = hash();
        await stores.sessions.create(s, { hash: t0, idleExpiresAt: s.idleExpiresAt }, { maxPerUser: 50 });
        expect(await stores.sessions.findById(s.id)).toEqual(s);
        const next = (salt = hash()) => ({ hash: hash(), idleExpiresAt: at(clock.now(), 7 * DAY), salt });
        const opts = {
          graceSeconds: 30,
          cookieGraceSeconds: 10,
          budget: { rotations: 1, windowSeconds: 60 },
        };
        const t1 = next();
        expect(await stores.sessions.rotate(t0, t1, clock.now(), opts)).toMatchObject({
          id: s.id,
          cookie: true,
        });
        clock.advance(4000);
        // Over the budget as well: a repeat stores nothing, so no budget applies to it.
        const again = next();
        expect(await stores.sessions.rotate(t0, again, clock.now(), opts)).toEqual({
          repeat: 'cookie',
          session: expect.objectContaining({ id: s.id, cookie: true }),
          salt: t1.salt,
        });
        // No fork: nothing was inserted for the repeat, and t1 is still the live token.
        expect(await stores.sessions.findByToken(again.hash)).toBeNull();
        expect(await stores.sessions.findByToken(t1.hash)).toMatchObject({ usedAt: null });
        // Past the window (the body sessions' 30 s grace does not apply): reuse.
        clock.advance(6001);
        expect(await stores.sessions.rotate(t0, next(), clock.now(), opts)).toBeNull();
      });

      it("a cookie session's repeat is reuse once the newest token was used, and always with a window of 0", async () => {
        const { stores, clock } = await setup();
        const s = newSession(clock.now(), { cookie: true });
        const t0 = hash();
        await stores.sessions.create(s, { hash: t0, idleExpiresAt: s.idleExpiresAt }, { maxPerUser: 50 });
        const next = () => ({ hash: hash(), idleExpiresAt: at(clock.now(), 7 * DAY), salt: hash() });
        const t1 = next();
        expect(await stores.sessions.rotate(t0, t1, clock.now(), { cookieGraceSeconds: 10 })).not.toBeNull();
        expect(await stores.sessions.rotate(t0, next(), clock.now(), { cookieGraceSeconds: 0 })).toBeNull();
        expect(await stores.sessions.rotate(t0, next(), clock.now())).toBeNull();
        const t2 = next();
        expect(
          await stores.sessions.rotate(t1.hash, t2, clock.now(), { cookieGraceSeconds: 10 }),
        ).not.toBeNull();
        expect(await stores.sessions.rotate(t0, next(), clock.now(), { cookieGraceSeconds: 10 })).toBeNull();
        expect(
          await stores.sessions.rotate(t1.hash, next(), clock.now(), { cookieGraceSeconds: 10 }),
        ).toEqual(expect.objectContaining({ repeat: 'cookie', salt: t2.salt }));
      });

      it('concurrent rotations of one cookie token: one rotates, every other answers the same salt', async () => {
        const { stores, clock } = await setup();
        const s = newSession(clock.now(), { cookie: true });
        const t0 = hash();
        await stores.sessions.create(s, { hash: t0, idleExpiresAt: s.idleExpiresAt }, { maxPerUser: 50 });
        const nexts = Array.from({ length: 8 }, () => ({
          hash: hash(),
          idleExpiresAt: at(clock.now(), 7 * DAY),
          salt: hash(),
        }));
        const results = await Promise.all(
          nexts.map((n) => stores.sessions.rotate(t0, n, clock.now(), { cookieGraceSeconds: 10 })),
        );
        const rotated = results.filter((r) => r !== null && !('repeat' in r) && !('refused' in r));
        expect(rotated).toHaveLength(1);
        const winner = nexts[results.indexOf(rotated[0]!)]!;
        for (const r of results)
          if (r !== rotated[0]) expect(r).toMatchObject({ repeat: 'cookie', salt: winner.salt });
      });

      it('a session that is not a cookie session keeps no salt: its repeats fork as before', async () => {
        const { stores, clock } = await setup();
        const s = newSession(clock.now());
        const t0 = hash();
        await stores.sessions.create(s, { hash: t0, idleExpiresAt: s.idleExpiresAt }, { maxPerUser: 50 });
        const next = () => ({ hash: hash(), idleExpiresAt: at(clock.now(), 7 * DAY), salt: hash() });
        const opts = { graceSeconds: 10, cookieGraceSeconds: 10 };
        expect(await stores.sessions.rotate(t0, next(), clock.now(), opts)).not.toHaveProperty('repeat');
        const sibling = await stores.sessions.rotate(t0, next(), clock.now(), opts);
        expect(sibling).toMatchObject({ id: s.id });
        expect(sibling).not.toHaveProperty('repeat');
        expect(await stores.sessions.findById(s.id)).not.toHaveProperty('cookie');
      });

      it('rotate returns null once the session has ended', async () => {
        const { stores, clock } = await setup();
        const s = newSession(clock.now());
        const t1 = hash();
        await stores.sessions.create(s, { hash: t1, idleExpiresAt: s.idleExpiresAt }, { maxPerUser: 50 });
        expect(await stores.sessions.revoke(s.id, clock.now(), 'logout')).toBe(true);
        expect(
          await stores.sessions.rotate(
            t1,
            { hash: hash(), idleExpiresAt: at(clock.now(), DAY) },
            clock.now(),
          ),
        ).toBeNull();
        expect(await stores.sessions.findById(s.id)).toMatchObject({
          endedAt: clock.now(),
          endReason: 'logout',
        });
      });

      it('rotate returns null after the absolute end, counted from creation, under a moved clock', async () => {
        const { stores, clock } = await setup();
        const s = newSession(clock.now(), {
          expiresAt: at(clock.now(), 2 * DAY),
          idleExpiresAt: at(clock.now(), DAY),
        });
        let token = hash();
        await stores.sessions.create(s, { hash: token, idleExpiresAt: s.idleExpiresAt }, { maxPerUser: 50 });
        // Refreshing every 12 h keeps it from idling out, but never past the absolute end.
        for (let i = 0; i < 3; i++) {
          clock.advance(12 * 60 * MIN);
          const next = hash();
          const r = await stores.sessions.rotate(
            token,
            { hash: next, idleExpiresAt: at(clock.now(), DAY) },
            clock.now(),
          );
          expect(r).toMatchObject({ id: s.id });
          expect((r as Session).idleExpiresAt.getTime()).toBeLessThanOrEqual(s.expiresAt.getTime());
          token = next;
        }
        clock.set(s.expiresAt);
        expect(
          await stores.sessions.rotate(
            token,
            { hash: hash(), idleExpiresAt: at(clock.now(), DAY) },
            clock.now(),
          ),
        ).toBeNull();
        expect(await stores.sessions.listForUser(s.userId, clock.now())).toEqual([]);
      });

      it('rotate returns null after the idle end under a moved clock', async () => {
        const { stores, clock } = await setup();
        const s = newSession(clock.now());
        const t1 = hash();
        await stores.sessions.create(s, { hash: t1, idleExpiresAt: s.idleExpiresAt }, { maxPerUser: 50 });
        clock.advance(7 * DAY);
        expect(
          await stores.sessions.rotate(
            t1,
            { hash: hash(), idleExpiresAt: at(clock.now(), DAY) },
            clock.now(),
          ),
        ).toBeNull();
      });

      it('create ends the oldest live sessions beyond maxPerUser and feeds their ids', async () => {
        const { stores, clock } = await setup();
        const userId = id();
        const ids: string[] = [];
        const start = await stores.sessions.endedSince(null, clock.now());
        for (let i = 0; i < 4; i++) {
          const s = newSession(clock.now(), { userId });
          ids.push(s.id);
          const evicted = await stores.sessions.create(
            s,
            { hash: hash(), idleExpiresAt: s.idleExpiresAt },
            { maxPerUser: 3 },
          );
          expect(evicted).toEqual(i < 3 ? [] : [ids[0]]);
          clock.advance(1000);
        }
        const live = await stores.sessions.listForUser(userId, clock.now());
        expect(live.map((s) => s.id)).toEqual([ids[3], ids[2], ids[1]]);
        expect(await stores.sessions.findById(ids[0]!)).toMatchObject({ endReason: 'evicted' });
        expect((await stores.sessions.endedSince(start.cursor, clock.now())).sids).toContain(ids[0]);
      });

      it('revoke ends a session once; revokeAllForUser spares exceptSid and other users', async () => {
        const { stores, clock } = await setup();
        const userId = id();
        const [a, b, c] = [
          newSession(clock.now(), { userId }),
          newSession(clock.now(), { userId }),
          newSession(clock.now(), { userId }),
        ];
        const other = newSession(clock.now());
        for (const s of [a!, b!, c!, other]) await stores.sessions.create(s, null, { maxPerUser: 50 });
        expect(await stores.sessions.revoke(a!.id, clock.now(), 'revoked')).toBe(true);
        expect(await stores.sessions.revoke(a!.id, clock.now(), 'revoked')).toBe(false);
        expect(await stores.sessions.revoke(id(), clock.now(), 'revoked')).toBe(false);
        const ended = await stores.sessions.revokeAllForUser(userId, clock.now(), {
          reason: 'password_change',
          exceptSid: c!.id,
        });
        expect(ended).toEqual([b!.id]);
        expect((await stores.sessions.listForUser(userId, clock.now())).map((s) => s.id)).toEqual([c!.id]);
        expect(await stores.sessions.listForUser(other.userId, clock.now())).toHaveLength(1);
        expect(await stores.sessions.findById(b!.id)).toMatchObject({ endReason: 'password_change' });
      });

      it('revokeAll ends every live session', async () => {
        const { stores, clock } = await setup();
        const a = newSession(clock.now());
        const b = newSession(clock.now());
        for (const s of [a, b]) await stores.sessions.create(s, null, { maxPerUser: 50 });
        expect(await stores.sessions.revokeAll(clock.now(), 'key_compromise')).toBeGreaterThanOrEqual(2);
        expect(await stores.sessions.listForUser(a.userId, clock.now())).toEqual([]);
        expect(await stores.sessions.listForUser(b.userId, clock.now())).toEqual([]);
      });

      it('listForUser returns live sessions only, newest first', async () => {
        const { stores, clock } = await setup();
        const userId = id();
        const old = newSession(clock.now(), {
          userId,
          expiresAt: at(clock.now(), 10 * MIN),
          idleExpiresAt: at(clock.now(), 10 * MIN),
        });
        await stores.sessions.create(old, null, { maxPerUser: 50 });
        clock.advance(1000);
        const mid = newSession(clock.now(), { userId });
        await stores.sessions.create(mid, null, { maxPerUser: 50 });
        clock.advance(1000);
        const young = newSession(clock.now(), { userId });
        await stores.sessions.create(young, null, { maxPerUser: 50 });
        expect((await stores.sessions.listForUser(userId, clock.now())).map((s) => s.id)).toEqual([
          young.id,
          mid.id,
          old.id,
        ]);
        clock.advance(10 * MIN);
        expect((await stores.sessions.listForUser(userId, clock.now())).map((s) => s.id)).toEqual([
          young.id,
          mid.id,
        ]);
      });

      it('endedSince returns every id ended after the cursor, and recent ones without a cursor', async () => {
        const { stores, clock } = await setup();
        const before = at(clock.now(), -1000);
        const s1 = newSession(clock.now());
        const s2 = newSession(clock.now());
        for (const s of [s1, s2]) await stores.sessions.create(s, null, { maxPerUser: 50 });
        const p0 = await stores.sessions.endedSince(null, before);
        expect(p0.sids).not.toContain(s1.id);
        await stores.sessions.revoke(s1.id, clock.now(), 'logout');
        const p1 = await stores.sessions.endedSince(p0.cursor, before);
        expect(p1.sids).toContain(s1.id);
        await stores.sessions.revokeAllForUser(s2.userId, clock.now(), { reason: 'password_reset' });
        const p2 = await stores.sessions.endedSince(p1.cursor, before);
        // An overlap with the previous page is allowed (the caller treats the feed as a set).
        expect(p2.sids).toContain(s2.id);
        const fresh = await stores.sessions.endedSince(null, before);
        expect(fresh.sids).toEqual(expect.arrayContaining([s1.id, s2.id]));
        expect((await stores.sessions.endedSince(null, at(clock.now(), 1000))).sids).not.toContain(s1.id);
      });
    });

    describe('reset codes', () => {
      const code = (userId: string, now: Date) => ({
        hash: hash(),
        userId,
        email: `reset-${id()}@example.test`,
        createdAt: now,
        expiresAt: at(now, 30 * MIN),
      });

      it('find returns a live code without using it; consume uses it once', async () => {
        const { stores, clock } = await setup();
        const c = code(id(), clock.now());
        await stores.resetCodes.create(c);
        expect(await stores.resetCodes.find(c.hash, clock.now())).toEqual(c);
        expect(await stores.resetCodes.find(c.hash, clock.now())).toEqual(c);
        expect(await stores.resetCodes.consume(c.hash, clock.now())).toEqual(c);
        expect(await stores.resetCodes.consume(c.hash, clock.now())).toBeNull();
        expect(await stores.resetCodes.find(c.hash, clock.now())).toBeNull();
        expect(await stores.resetCodes.consume(hash(), clock.now())).toBeNull();
      });

      it('consume hands a code to exactly one of many concurrent callers', async () => {
        const { stores, clock } = await setup();
        const c = code(id(), clock.now());
        await stores.resetCodes.create(c);
        const results = await Promise.all(
          Array.from({ length: 10 }, () => stores.resetCodes.consume(c.hash, clock.now())),
        );
        expect(results.filter((r) => r !== null)).toHaveLength(1);
      });

      it('a newer code voids the older codes of the same user only', async () => {
        const { stores, clock } = await setup();
        const userId = id();
        const older = code(userId, clock.now());
        const otherUsers = code(id(), clock.now());
        await stores.resetCodes.create(older);
        await stores.resetCodes.create(otherUsers);
        const newer = code(userId, clock.now());
        await stores.resetCodes.create(newer);
        expect(await stores.resetCodes.consume(older.hash, clock.now())).toBeNull();
        expect(await stores.resetCodes.consume(newer.hash, clock.now())).not.toBeNull();
        expect(await stores.resetCodes.consume(otherUsers.hash, clock.now())).not.toBeNull();
      });

      it("voidForUser kills that user's code only", async () => {
        const { stores, clock } = await setup();
        const mine = code(id(), clock.now());
        const theirs = code(id(), clock.now());
        await stores.resetCodes.create(mine);
        await stores.resetCodes.create(theirs);
        await stores.resetCodes.voidForUser(mine.userId);
        await stores.resetCodes.voidForUser(id());
        expect(await stores.resetCodes.find(mine.hash, clock.now())).toBeNull();
        expect(await stores.resetCodes.consume(mine.hash, clock.now())).toBeNull();
        expect(await stores.resetCodes.consume(theirs.hash, clock.now())).not.toBeNull();
      });

      it('a code expires after 30 minutes under a moved clock', async () => {
        const { stores, clock } = await setup();
        const c = code(id(), clock.now());
        await stores.resetCodes.create(c);
        clock.advance(30 * MIN - 1);
        expect(await stores.resetCodes.find(c.hash, clock.now())).not.toBeNull();
        clock.advance(1);
        expect(await stores.resetCodes.find(c.hash, clock.now())).toBeNull();
        expect(await stores.resetCodes.consume(c.hash, clock.now())).toBeNull();
      });
    });

    describe('limiter', () => {
      it('consume counts points in a window that restarts once it ends under a moved clock', async () => {
        const { stores, clock } = await setup();
        const key = `login:email:${id()}`;
        const first = await stores.limiter.consume(key, 1, 15 * MIN, clock.now());
        expect(first).toEqual({ points: 1, resetAt: at(clock.now(), 15 * MIN) });
        clock.advance(MIN);
        expect((await stores.limiter.consume(key, 2, 15 * MIN, clock.now())).points).toBe(3);
        expect(await stores.limiter.get(key, clock.now())).toEqual({ points: 3, resetAt: first.resetAt });
        clock.set(first.resetAt);
        expect(await stores.limiter.get(key, clock.now())).toBeNull();
        const again = await stores.limiter.consume(key, 1, 15 * MIN, clock.now());
        expect(again).toEqual({ points: 1, resetAt: at(clock.now(), 15 * MIN) });
      });

      it('concurrent consumes never lose an increment', async () => {
        const { stores, clock } = await setup();
        const key = `login:ip:${id()}`;
        await Promise.all(Array.from({ length: 25 }, () => stores.limiter.consume(key, 1, MIN, clock.now())));
        expect((await stores.limiter.get(key, clock.now()))?.points).toBe(25);
      });

      it('a refund (negative points) lowers a live counter, never below zero, and starts no window', async () => {
        const { stores, clock } = await setup();
        const key = `code:user:${id()}`;
        const none = await stores.limiter.consume(key, -1, MIN, clock.now());
        expect(none.points).toBe(0);
        expect(await stores.limiter.get(key, clock.now())).toBeNull();
        const first = await stores.limiter.consume(key, 2, MIN, clock.now());
        expect((await stores.limiter.consume(key, -1, MIN, clock.now())).points).toBe(1);
        expect((await stores.limiter.consume(key, -5, MIN, clock.now())).points).toBe(0);
        expect(await stores.limiter.get(key, clock.now())).toEqual({ points: 0, resetAt: first.resetAt });
        clock.set(first.resetAt);
        expect((await stores.limiter.consume(key, -1, MIN, clock.now())).points).toBe(0);
        expect(await stores.limiter.get(key, clock.now())).toBeNull();
        await Promise.all([
          ...Array.from({ length: 10 }, () => stores.limiter.consume(key, 1, MIN, clock.now())),
          ...Array.from({ length: 4 }, () => stores.limiter.consume(key, -1, MIN, clock.now())),
        ]);
        expect((await stores.limiter.get(key, clock.now()))!.points).toBeGreaterThanOrEqual(6);
      });

      it('delete clears a key; get of an unknown key is null', async () => {
        const { stores, clock } = await setup();
        const key = `forgot:email:${id()}`;
        await stores.limiter.consume(key, 1, MIN, clock.now());
        await stores.limiter.delete(key);
        expect(await stores.limiter.get(key, clock.now())).toBeNull();
        await stores.limiter.delete(`absent:${id()}`);
      });

      it('consumeMany counts each key as consume does when all stay within their limits, answers in entry order, and loses no increment', async () => {
        const { stores, clock } = await setup();
        const [a, b, c] = [`login:ip:${id()}`, `login:email+ip:${id()}`, `login:email:${id()}`];
        const early = await stores.limiter.consume(b, 2, MIN, clock.now());
        clock.advance(1000);
        const got = await stores.limiter.consumeMany(
          [
            { key: c, points: 1, durationMs: 15 * MIN, limit: 100 },
            { key: a, points: 3, durationMs: MIN, limit: 100 },
            { key: b, points: 1, durationMs: MIN, limit: 100 },
          ],
          clock.now(),
        );
        expect(got).toEqual([
          { points: 1, resetAt: at(clock.now(), 15 * MIN) },
          { points: 3, resetAt: at(clock.now(), MIN) },
          { points: 3, resetAt: early.resetAt },
        ]);
        expect(await stores.limiter.consumeMany([], clock.now())).toEqual([]);
        // A window that has ended restarts, key by key.
        clock.set(early.resetAt);
        const next = await stores.limiter.consumeMany(
          [
            { key: b, points: 1, durationMs: MIN, limit: 100 },
            { key: c, points: 1, durationMs: 15 * MIN, limit: 100 },
          ],
          clock.now(),
        );
        expect(next.map((r) => r?.points)).toEqual([1, 2]);
        // Overlapping concurrent calls (keys in different orders) neither lose counts nor fail.
        await Promise.all(
          Array.from({ length: 12 }, (_, i) =>
            stores.limiter.consumeMany(
              (i % 2 ? [a, c] : [c, a]).map((key) => ({ key, points: 1, durationMs: 15 * MIN, limit: 100 })),
              clock.now(),
            ),
          ),
        );
        expect((await stores.limiter.get(c, clock.now()))?.points).toBe(14);
      });

      it('consumeMany counts only the first key in order that would go over its limit, and no other', async () => {
        const { stores, clock } = await setup();
        const [a, b, c] = [`login:ip:${id()}`, `login:email+ip:${id()}`, `login:email:${id()}`];
        const full = await stores.limiter.consume(b, 3, MIN, clock.now());
        await stores.limiter.consume(c, 5, MIN, clock.now());
        const entries = [
          { key: a, points: 1, durationMs: MIN, limit: 10 },
          { key: b, points: 1, durationMs: MIN, limit: 3 },
          { key: c, points: 1, durationMs: MIN, limit: 5 },
        ];
        // b is the first over its limit (c would be too): b alone is counted.
        expect(await stores.limiter.consumeMany(entries, clock.now())).toEqual([
          null,
          { points: 4, resetAt: full.resetAt },
          null,
        ]);
        expect(await stores.limiter.get(a, clock.now())).toBeNull();
        expect((await stores.limiter.get(c, clock.now()))?.points).toBe(5);
        // Concurrent refused calls never count the others either.
        await Promise.all(Array.from({ length: 12 }, () => stores.limiter.consumeMany(entries, clock.now())));
        expect(await stores.limiter.get(a, clock.now())).toBeNull();
        expect((await stores.limiter.get(b, clock.now()))?.points).toBe(16);
        expect((await stores.limiter.get(c, clock.now()))?.points).toBe(5);
        // Once the windows end, every key is counted while all stay within their limits.
        clock.set(full.resetAt);
        const after = await stores.limiter.consumeMany(entries, clock.now());
        expect(after.map((r) => r?.points)).toEqual([1, 1, 1]);
        // A later key over its limit refuses alone; the earlier ones are not counted.
        await stores.limiter.consume(c, 4, MIN, clock.now());
        const last = await stores.limiter.consumeMany(entries, clock.now());
        expect(last.map((r) => r?.points ?? null)).toEqual([null, null, 6]);
        expect((await stores.limiter.get(a, clock.now()))?.points).toBe(1);
      });

      it('settle refunds live counters (never below zero, starting none) and clears others in one call', async () => {
        const { stores, clock } = await setup();
        const [a, b, c, none] = [
          `login:ip:${id()}`,
          `login:email:${id()}`,
          `login:email+ip:${id()}`,
          `x:${id()}`,
        ];
        const first = await stores.limiter.consume(a, 3, MIN, clock.now());
        await stores.limiter.consume(b, 1, MIN, clock.now());
        await stores.limiter.consume(c, 5, MIN, clock.now());
        const ended = `failures:user:${id()}`;
        await stores.limiter.consume(ended, 4, 1000, clock.now());
        clock.advance(1000);
        const held = await stores.limiter.settle(
          [
            { key: a, points: 1 },
            { key: b, points: 4 },
            { key: none, points: 1 },
          ],
          [c, `absent:${id()}`, ended],
          clock.now(),
        );
        // What each cleared key held: its live counter, else null.
        expect(held).toEqual([{ points: 5, resetAt: first.resetAt }, null, null]);
        expect(await stores.limiter.get(a, clock.now())).toEqual({ points: 2, resetAt: first.resetAt });
        expect((await stores.limiter.get(b, clock.now()))?.points).toBe(0);
        expect(await stores.limiter.get(none, clock.now())).toBeNull();
        expect(await stores.limiter.get(c, clock.now())).toBeNull();
        // A cleared key starts a fresh window at its next consume.
        clock.advance(1000);
        expect(await stores.limiter.settle([], [c], clock.now())).toEqual([null]);
        expect(await stores.limiter.consume(c, 1, MIN, clock.now())).toEqual({
          points: 1,
          resetAt: at(clock.now(), MIN),
        });
        expect(await stores.limiter.settle([], [], clock.now())).toEqual([]);
      });
    });
  });
}
