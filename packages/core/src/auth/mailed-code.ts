import type { Mail } from '../ports/mailer.js';
import { hashEmailCode, isEmailCode, newEmailCode } from '../tokens/email-code.js';
import type { AuthDeps } from './deps.js';

/** Same lifetime as every mailed six-digit code: with `code:user` at 10 failures per 15 min,
 *  a guess stays near one in 100,000 per code. */
export const MAILED_CODE_TTL_SECONDS = 10 * 60;

/** A code for a signed-in user's request, stored under `key` (a new one replaces the last).
 *  `bind` is what the code proves beyond its key (the new address of an email change): it is
 *  hashed in, so the code is good for that value only. */
export interface MailedCode {
  userId: string;
  key: string;
  bind?: string;
}

const hashOf = (c: MailedCode, code: string) =>
  hashEmailCode(c.bind === undefined ? c.key : `${c.key}\n${c.bind}`, code);

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
  const code = newEmailCode();
  const now = ctx.clock.now();
  await ctx.stores.emailCodes.put({
    key: c.key,
    userId: c.userId,
    codeHash: hashOf(c, code),
    createdAt: now,
    expiresAt: new Date(now.getTime() + MAILED_CODE_TTL_SECONDS * 1000),
  });
  d.background.run('mail', () => ctx.mailer.send(mail(code, MAILED_CODE_TTL_SECONDS / 60)));
}

/** Uses the code (single use, atomic). Attempts count with the MFA codes (`code:user`,
 *  `code:ip`) before the check and are given back when right. */
export async function useMailedCode(d: AuthDeps, c: MailedCode, code: string, ip: string): Promise<boolean> {
  const { ctx } = d;
  const counted = await ctx.throttle.take(['code:user', c.userId], ['code:ip', ip]);
  const given = code.trim();
  if (!isEmailCode(given) || !(await ctx.stores.emailCodes.consume(c.key, hashOf(c, given), ctx.clock.now())))
    return false;
  await counted.release();
  return true;
}
