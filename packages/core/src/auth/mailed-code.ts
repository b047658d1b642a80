import type { Mail } from '../ports/mailer.js';
import { hashEmailCode, isEmailCode, storeEmailCode } from '../tokens/email-code.js';
import type { AuthDeps } from './deps.js';

/** The default lifetime of mailed six-digit codes (CONTRACT.md 2.1). */
export const MAILED_CODE_TTL_SECONDS = 10 * 60;

/** A code for a signed-in user's request, stored under `key` (a new one replaces the last).
 *  `bind` is what the code proves beyond its key (the new address of an email change): it is
 *  hashed in, so the code is good for that value only. */
export interface MailedCode {
  userId: string;
  key: string;
  bind?: string;
}

const hashKeyOf = (c: MailedCode) => (c.bind === undefined ? c.key : `${c.key}\n${c.bind}`);

/** Stores and mails a fresh code. One send per 30 s (`resend`) and a few per hour
 *  (`mail:user`): signup takes any address, so these must not flood a stranger's mailbox. */
export async function mailCode(
  d: AuthDeps,
  c: MailedCode,
  mail: (code: string, ttlMinutes: number) => Mail,
): Promise<void> {
  const { ctx } = d;
  await ctx.throttle.hit('resend', c.key);
  await ctx.throttle.hit('mail:user', c.userId);
  const code = await storeEmailCode(ctx.stores.emailCodes, {
    key: c.key,
    userId: c.userId,
    now: ctx.clock.now(),
    ttlSeconds: MAILED_CODE_TTL_SECONDS,
    hashKey: hashKeyOf(c),
  });
  d.background.run('mail', () => ctx.mailer.send(mail(code, MAILED_CODE_TTL_SECONDS / 60)));
}

/** Uses the code (single use, atomic). Each attempt is counted before the check, per user over
 *  a day (`confirm:user`: a stranger's account can keep asking for codes, so guesses are capped
 *  per day, not per code) and per address (`code:ip`). The point is given back when the code
 *  was right, and when no code was live (already used by a parallel copy, expired, never
 *  sent): a guess at nothing learns nothing. */
export async function useMailedCode(d: AuthDeps, c: MailedCode, code: string, ip: string): Promise<boolean> {
  const { ctx } = d;
  const counted = await ctx.throttle.take(['confirm:user', c.userId], ['code:ip', ip]);
  const given = code.trim();
  const now = ctx.clock.now();
  let used: boolean;
  try {
    used =
      isEmailCode(given) &&
      (await ctx.stores.emailCodes.consume(c.key, hashEmailCode(hashKeyOf(c), given), now));
    if (!used && (await ctx.stores.emailCodes.has(c.key, now))) return false;
  } catch (e) {
    await counted.release();
    throw e;
  }
  await counted.release();
  return used;
}
