import type { PosternContext, ThrottleBucket } from '../context.js';
import { isPosternError } from '../errors.js';
import type { Mail } from '../ports/mailer.js';
import type { Stores } from '../ports/stores.js';
import { hashEmailCode, isEmailCode, storeEmailCode } from '../tokens/email-code.js';
import type { AuthDeps } from './deps.js';

/** The default lifetime of mailed six-digit codes (10 minutes). */
export const MAILED_CODE_TTL_SECONDS = 10 * 60;

/** A code for a user's request, stored under `key` (a new one replaces the last). `bind` is
 *  what the code proves beyond its key (the new address of an email change): it is hashed in,
 *  so the code is good for that value only. */
export interface MailedCode {
  userId: string;
  key: string;
  bind?: string;
}

const hashKeyOf = (c: MailedCode) => (c.bind === undefined ? c.key : `${c.key}\n${c.bind}`);

/** Stores and mails a fresh code. One send per 30 s (`resend`) and a few per hour
 *  (`mail:user`): signup takes any address, so these must not flood a stranger's mailbox.
 *  `admit` runs once the send is counted, before any code is made: what it refuses (an
 *  address another account has) costs the send too, so the refusal cannot be asked without
 *  limit. */
export async function mailCode(
  d: AuthDeps,
  c: MailedCode,
  mail: (code: string, ttlMinutes: number) => Mail,
  admit?: () => Promise<void>,
): Promise<void> {
  const { ctx } = d;
  await ctx.throttle.hit('resend', c.key);
  await ctx.throttle.hit('mail:user', c.userId);
  await admit?.();
  const code = await storeEmailCode(ctx.stores.emailCodes, {
    key: c.key,
    userId: c.userId,
    now: ctx.clock.now(),
    ttlSeconds: MAILED_CODE_TTL_SECONDS,
    hashKey: hashKeyOf(c),
  });
  d.background.run('mail', () => ctx.mailer.send(mail(code, MAILED_CODE_TTL_SECONDS / 60)));
}

/** Whether `code` is the live code of `c`, without using it: lets a caller skip costly work
 *  (hashing recovery codes) for a wrong guess before `useEmailCode` decides for good. */
export async function emailCodeMatches(ctx: PosternContext, c: MailedCode, code: string): Promise<boolean> {
  const given = code.trim();
  return (
    isEmailCode(given) &&
    (await ctx.stores.emailCodes.matches(c.key, hashEmailCode(hashKeyOf(c), given), ctx.clock.now()))
  );
}

/** What a code attempt found: `used` (the right code, consumed with `onRight`'s writes),
 *  `wrong` (a guess at a live code), `gone` (no live code: used by a parallel copy, expired,
 *  never sent) or `done` (gone, and what it unlocks has happened anyway: a parallel copy). */
export type CodeUse = 'used' | 'wrong' | 'gone' | 'done';

/** The buckets a guess at a verification or change code counts in: per user over a day (a
 *  stranger's account can ask for codes all day) and per address. */
export const confirmBuckets = (userId: string, ip: string): Array<readonly [ThrottleBucket, string]> => [
  ['confirm:user', userId],
  ['code:ip', ip],
];

/** Uses a mailed code and does what it unlocks (`onRight`) in one transaction: the code's row
 *  stays locked until the writes commit, and a write that throws (409 `email_taken`, say) leaves
 *  the code unused on stores with rollback. The attempt is counted in `count` before the check;
 *  the point is kept only for a wrong guess at a live code (a guess at nothing learns nothing,
 *  and a parallel copy of the right code must not cost the user a try). `done` tells whether a
 *  parallel copy already did the work: asked when the code is gone, and when the limiter refuses
 *  (many copies waiting on the code's row each hold a point until the winner commits). */
export async function useEmailCode(
  ctx: PosternContext,
  c: MailedCode,
  code: string,
  opts: {
    count: Array<readonly [ThrottleBucket, string]>;
    onRight: (tx: Stores) => Promise<unknown>;
    done?: () => Promise<boolean>;
  },
): Promise<CodeUse> {
  const done = opts.done ?? (() => Promise.resolve(false));
  let counted: Awaited<ReturnType<typeof ctx.throttle.take>>;
  try {
    counted = await ctx.throttle.take(...opts.count);
  } catch (e) {
    if (isPosternError(e) && e.code === 'rate_limited' && (await done())) return 'done';
    throw e;
  }
  const given = code.trim();
  const now = ctx.clock.now();
  let found: 'used' | 'wrong' | 'gone';
  try {
    found = await ctx.stores.transaction(async (tx) => {
      const hash = hashEmailCode(hashKeyOf(c), given);
      if (isEmailCode(given) && (await tx.emailCodes.consume(c.key, hash, now))) {
        await opts.onRight(tx);
        return 'used';
      }
      return (await tx.emailCodes.has(c.key, now)) ? 'wrong' : 'gone';
    });
  } catch (e) {
    await counted.release();
    throw e;
  }
  if (found === 'wrong') return found;
  await counted.release();
  return found === 'gone' && (await done()) ? 'done' : found;
}
