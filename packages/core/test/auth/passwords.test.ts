import { parseOptions } from '@node-rs/argon2';
import { memoryStores } from '@postern/core/memory';
import { TestClock } from '@postern/testkit';
import { describe, expect, it, vi } from 'vitest';
import { createHashQueue } from '../../src/auth/hash-queue.js';
import { MAX_SCORED_CHARS, passwordScore, scoredSpellings } from '../../src/auth/strength.js';
import { email, STRONG, setup, user } from './setup.js';

// The real Argon2id, with a record of the hashes each verify was given: what an unknown email
// costs is checked as work done (one verify, same parameters), not as a timing.
const argon = vi.hoisted(() => ({ verified: [] as string[] }));
vi.mock('@node-rs/argon2', async (importOriginal) => {
  const real = await importOriginal<typeof import('@node-rs/argon2')>();
  return {
    ...real,
    verify: (hashed: string, ...rest: [string | Uint8Array]) => {
      argon.verified.push(hashed);
      return real.verify(hashed, ...rest);
    },
  };
});

describe('passwords', () => {
  it('stores an Argon2id hash with m=19456 t=2 p=1', async () => {
    const t = setup();
    const u = await user(t);
    const stored = await t.stores.users.findById(u.id);
    expect(stored!.passwordHash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(stored!.passwordHash).not.toContain(STRONG);
    expect(parseOptions(stored!.passwordHash)).toMatchObject({
      memoryCost: 19456,
      timeCost: 2,
      parallelism: 1,
    });
  });

  it('rehashes on login when the stored parameters differ from the configured ones', async () => {
    const clock = new TestClock();
    const stores = memoryStores({ clock });
    const old = setup({ passwordHashing: { memoryCost: 4096, timeCost: 1 } }, { stores, clock });
    const u = await user(old);
    const before = await stores.users.findById(u.id);
    expect(before!.passwordHash).toMatch(/m=4096,t=1,p=1/);
    const now = setup({}, { stores, clock });
    await now.ph.auth.login({ email: u.email, password: u.password });
    await vi.waitFor(async () => {
      expect((await stores.users.findById(u.id))!.passwordHash).toMatch(/m=19456,t=2,p=1/);
    });
    const after = await stores.users.findById(u.id);
    expect(after!.passwordChangedAt).toEqual(before!.passwordChangedAt);
    await now.ph.auth.login({ email: u.email, password: u.password });
  });

  it('runs one Argon2id verify with the configured parameters for an unknown email, as for a wrong password', async () => {
    const t = setup();
    const u = await user(t);
    const verifiesOf = async (e: string) => {
      argon.verified.length = 0;
      await expect(t.ph.auth.login({ email: e, password: 'wrong-password-123' })).rejects.toMatchObject({
        code: 'invalid_credentials',
      });
      return argon.verified.map((h) => {
        const { algorithm, version, memoryCost, timeCost, parallelism } = parseOptions(h);
        return { algorithm, version, memoryCost, timeCost, parallelism };
      });
    };
    const known = await verifiesOf(u.email);
    expect(known).toEqual([{ algorithm: 2, version: 1, memoryCost: 19456, timeCost: 2, parallelism: 1 }]);
    expect(await verifiesOf(email())).toEqual(known);
  });

  it('hashes exactly what was sent: no trimming, case folding or normalisation', async () => {
    const t = setup();
    const password = ' Ünïcode-Pässwörd-Kestrel ';
    const u = await user(t, password);
    await t.ph.auth.login({ email: u.email, password });
    for (const variant of [password.trim(), password.toLowerCase(), password.normalize('NFD')])
      await expect(t.ph.auth.login({ email: u.email, password: variant })).rejects.toMatchObject({
        code: 'invalid_credentials',
      });
  });

  it('accepts 8 to 128 characters, counted as code points', async () => {
    const t = setup();
    const phrase = 'Zwölf Boxkämpfer jagen Viktor quer über den großen Sylter Deich 🦊🐙🦉🐝 ';
    const long = phrase + 'k'.repeat(128 - [...phrase].length); // 128 code points, more UTF-16 units
    expect(long.length).toBeGreaterThan(128);
    await user(t, long);
    await expect(user(t, `${long}z`)).rejects.toMatchObject({ code: 'validation_failed' });
    await expect(user(t, 'Zq9$vK2')).rejects.toMatchObject({ code: 'validation_failed' });
  });

  it('rejects common and context-derived passwords; the score threshold is configurable', async () => {
    const t = setup();
    for (const weak of ['password123', 'qwertyuiop', 'iloveyou2024', 'Password1!'])
      await expect(user(t, weak)).rejects.toMatchObject({
        code: 'validation_failed',
        errors: [{ path: 'password', message: expect.any(String) }],
      });
    const lax = setup({ passwordPolicy: { minScore: 0 } });
    await user(lax, 'password123');
  });

  it('asks the host breached-password check when one is configured', async () => {
    const seen: string[] = [];
    const t = setup({
      passwordPolicy: {
        isBreached: async (p) => {
          seen.push(p);
          return p === STRONG;
        },
      },
    });
    await expect(user(t, STRONG)).rejects.toMatchObject({ code: 'validation_failed' });
    await user(t, 'violet-otter-jumps-gravel-1987');
    expect(seen).toEqual([STRONG, 'violet-otter-jumps-gravel-1987']);
  });
});

describe('hash queue', () => {
  it('runs at most `concurrency` tasks at once and the rest in order', async () => {
    const run = createHashQueue(2, 100);
    let active = 0;
    let peak = 0;
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        run(async () => {
          active++;
          peak = Math.max(peak, active);
          await new Promise((r) => setTimeout(r, 5));
          order.push(i);
          active--;
        }),
      ),
    );
    expect(peak).toBe(2);
    expect(order).toHaveLength(8);
  });

  it('refuses work beyond the queue bound with 503 unavailable', async () => {
    const run = createHashQueue(1, 1);
    let release!: () => void;
    const first = run(() => new Promise<void>((r) => (release = r)));
    const second = run(async () => 'queued');
    await expect(run(async () => 'third')).rejects.toMatchObject({ code: 'unavailable', retryAfter: 1 });
    release();
    await first;
    expect(await second).toBe('queued');
  });
});

describe('password strength spellings', () => {
  it('scores an ASCII password as typed, capitals included (one check, the policy unchanged)', () => {
    for (const p of ['HelloWorld2024', 'SunnyDayRain', 'NewYorkCity1'])
      expect(passwordScore(p, []).score).toBe(3);
  });

  it('scores look-alike spellings in either case as the weak password they spell', () => {
    for (const p of [
      'p\u0430ssw\u043erd123',
      'P\u0410SSW\u041eRD123',
      '\u041f\u0410\u0420\u041e\u041b\u042c123',
    ])
      expect(passwordScore(p, []).score).toBeLessThan(3);
  });

  it('scores all spellings of a long mixed-script password within one check of 64 characters', () => {
    const chars = [...'aеоЖж漢字ｐａ1!Ωβ日本zQ€😀'];
    const password = Array.from({ length: 128 }, (_, i) => chars[(i * 7) % chars.length]).join('');
    const spellings = scoredSpellings(password);
    // Three spellings scored whole were three checks of 64: half a second on the event loop.
    expect(spellings.length).toBeGreaterThan(1);
    expect(spellings.reduce((n, s) => n + [...s].length, 0)).toBeLessThanOrEqual(MAX_SCORED_CHARS);
    // Cut by code points: no lone surrogate.
    for (const s of spellings) expect(s.isWellFormed()).toBe(true);
    expect(passwordScore(password, []).score).toBe(4);
    // An ASCII password is scored on its first 64 characters, as zxcvbn always cut it.
    expect(scoredSpellings('x'.repeat(128))).toEqual(['x'.repeat(64)]);
    expect(scoredSpellings('HelloWorld2024')).toEqual(['HelloWorld2024']);
  });
});
