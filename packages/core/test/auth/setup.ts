import { createPostern, type Mail, type PosternOptions, type Stores } from '@postern/core';
import { memoryStores } from '@postern/core/memory';
import { recordingLogger, TestClock } from '@postern/testkit';
import * as OTPAuth from 'otpauth';
import { createAuthArea } from '../../src/auth/index.js';
import { createAuthServices } from '../../src/auth/services.js';
import type { MfaGate } from '../../src/context.js';
import { createKeyring } from '../../src/tokens/keyring.js';

export const STRONG = 'correct-horse-battery-staple-42';
export const STRONG_2 = 'violet-otter-jumps-gravel-1987';

/** A mailer that keeps what it was given. */
export function recordingMailer() {
  const mails: Mail[] = [];
  return {
    mails,
    async send(mail: Mail) {
      mails.push(mail);
    },
    /** Waits for a mail to `to` (mails are queued, never awaited by the flows). */
    async waitFor(to: string, match: (m: Mail) => boolean = () => true, ms = 3000): Promise<Mail> {
      const end = Date.now() + ms;
      for (;;) {
        const m = mails.filter((x) => x.to === to && match(x)).at(-1);
        if (m) return m;
        if (Date.now() > end) throw new Error(`no mail to ${to}`);
        await new Promise((r) => setTimeout(r, 5));
      }
    },
  };
}

export function setup(options: Partial<PosternOptions> = {}, shared?: { stores: Stores; clock: TestClock }) {
  const clock = shared?.clock ?? new TestClock(Date.UTC(2030, 0, 1));
  const stores = shared?.stores ?? memoryStores({ clock });
  const mailer = recordingMailer();
  const log = recordingLogger();
  const ph = createPostern({
    issuer: 'https://postern.test',
    audience: 'postern-test',
    mailer,
    logger: log.logger,
    clock,
    stores,
    ...options,
  });
  return { ph, clock, stores, mailer, log };
}

export type Setup = ReturnType<typeof setup>;

let n = 0;
/** A fresh, unique email. */
export const email = (tag = 'user') => `${tag}-${++n}-${Date.now()}@example.com`;

/** Signs up a user and returns its email, password and id. */
export async function user(t: Setup, password = STRONG) {
  const address = email();
  const { user: u } = await t.ph.auth.signup({ name: 'Ada Lovelace', email: address, password });
  return { id: u.id, email: address, password };
}

/** Logs in with a refresh token and returns the session answer. */
export async function session(t: Setup, u: { email: string; password: string }) {
  const a = await t.ph.auth.login(
    { email: u.email, password: u.password, refreshToken: true },
    { ip: '192.0.2.1' },
  );
  if (!('accessToken' in a)) throw new Error('MFA was not expected');
  return a as { accessToken: string; refreshToken: string; expiresIn: number; tokenType: 'Bearer' };
}

/** The real auth area built as `createPostern` builds it, with the given MFA gate (default:
 *  MFA off) in place of the MFA area's; `ctx` is the shared context the other areas receive. */
export function authContext(opts: { mfa?: MfaGate; options?: Partial<PosternOptions> } = {}) {
  const clock = new TestClock(Date.UTC(2030, 0, 1));
  const log = recordingLogger();
  const mailer = recordingMailer();
  const services = createAuthServices({
    options: { issuer: 'https://postern.test', audience: 'postern-test', ...opts.options },
    stores: memoryStores({ clock }),
    clock,
    logger: log.logger,
    keyring: createKeyring({ issuer: 'https://postern.test', logger: log.logger, clock }),
    mailer,
    settings: { get: () => undefined },
  });
  const area = createAuthArea({
    ...services,
    mfa: opts.mfa ?? {
      methods: async () => [],
      begin: () => Promise.reject(new Error('MFA off')),
      voidPending: async () => {},
    },
  });
  return { ctx: services.ctx, area, clock, log, mailer };
}

/** The TOTP code of `secret` (base32) at the test clock's time. */
export const totpCode = (secret: string, t: Pick<Setup, 'clock'>) =>
  new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), digits: 6, period: 30 }).generate({
    timestamp: t.clock.now().getTime(),
  });

/** Signs a user up (password STRONG), logs in and confirms TOTP; `t` needs `mfa.encryptionKey`. */
export async function totpUser(t: Setup) {
  const u = await user(t);
  const principal = await t.ph.auth.verifyAccessToken((await session(t, u)).accessToken);
  const { secret } = await t.ph.mfa.totpSetup(principal);
  const { recoveryCodes } = await t.ph.mfa.totpConfirm(principal, { code: totpCode(secret, t) });
  return { ...u, principal, secret, recoveryCodes: recoveryCodes ?? [] };
}
