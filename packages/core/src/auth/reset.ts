import { isPosternError, PosternError } from '../errors.js';
import type { Stores } from '../ports/stores.js';
import { randomToken, sha256 } from '../tokens/opaque.js';
import type { AuthDeps } from './deps.js';
import { ipOf, logAuthEvent, type RequestMeta } from './log.js';
import { passwordChangedMail, resetCodeMail } from './mails.js';
import { passwordContext } from './signup.js';

export const RESET_CODE_TTL_SECONDS = 30 * 60;

/** Step 1: 202 for every well-formed email. The answer waits only for the limiter hits, which
 *  are the same for known and unknown emails; finding the user, storing the code and mailing
 *  it run in the background, so neither timing nor answer tells whether an account exists.
 *  Over the per-address or per-email limit the answer stays 202 and no mail is sent. */
export async function forgot(d: AuthDeps, email: string, meta: RequestMeta): Promise<{ accepted: true }> {
  const { ctx } = d;
  try {
    await ctx.throttle.hit('forgot:ip', ipOf(meta));
    await ctx.throttle.hit('forgot:email', email);
  } catch (e) {
    if (isPosternError(e) && e.code === 'rate_limited') {
      logAuthEvent(ctx.logger, 'info', { event: 'forgot', outcome: 'failure', reason: 'rate_limited' }, meta);
      return { accepted: true };
    }
    throw e;
  }
  d.background.run('reset_code', async () => {
    const user = await ctx.stores.users.findByEmail(email);
    if (!user || user.disabled) {
      logAuthEvent(
        ctx.logger,
        'info',
        { event: 'forgot', outcome: 'failure', reason: 'unknown_email' },
        meta,
      );
      return;
    }
    const code = randomToken();
    const now = ctx.clock.now();
    await ctx.stores.resetCodes.create({
      hash: sha256(code),
      userId: user.id,
      email: user.email,
      createdAt: now,
      expiresAt: new Date(now.getTime() + RESET_CODE_TTL_SECONDS * 1000),
    });
    await ctx.mailer.send(resetCodeMail(user.email, code, RESET_CODE_TTL_SECONDS / 60));
    logAuthEvent(ctx.logger, 'info', { event: 'forgot', outcome: 'success', userId: user.id }, meta);
  });
  return { accepted: true };
}

/** A code mailed to an address the user has left since (an email change raced the request) is
 *  dead. One without an address (stored before Postgres migration 0008, or by an instance not yet
 *  upgraded during a rolling deploy) is taken as before. */
const mailedTo = (c: { email: string }, address: string) => c.email === '' || c.email === address;

/** What a password reset clears on an account whose address was never proven: every MFA factor
 *  (TOTP, the email factor, passkeys), the recovery codes, and the inbox access the account
 *  granted to others (`dropGrantsOf`). Sessions and pending logins end on every reset anyway.
 *  Runs in the reset's transaction: all of it commits with the new password, or none. */
async function clearUnprovenSetup(tx: Stores, userId: string) {
  const factors = (await tx.mfaFactors.listFactors(userId)).map((f) => f.type);
  for (const type of factors) await tx.mfaFactors.removeFactor(userId, type);
  const passkeys = await tx.webauthnCredentials.removeAllCredentials(userId);
  await tx.recoveryCodes.deleteAll(userId);
  const memberships = await tx.inboxAccounts.dropGrantsOf(userId);
  return { factors, passkeys, memberships };
}

/** Step 2: the code alone identifies the request. Consuming it, setting the password, proving
 *  the address (clearing what was set up before, when it was never proven) and ending every
 *  session commit together; pending MFA logins die; no tokens are returned, so
 *  MFA still applies at the next login; the owner is mailed. */
export async function forgotReset(
  d: AuthDeps,
  input: { code: string; password: string },
  meta: RequestMeta,
): Promise<void> {
  const { ctx, passwords } = d;
  const ip = ipOf(meta);
  const attempt = await ctx.throttle.take(['code:ip', ip]);
  const hash = sha256(input.code);
  const found = await ctx.stores.resetCodes.find(hash, ctx.clock.now());
  const user = found && (await ctx.stores.users.findById(found.userId));
  if (!user || user.disabled || !mailedTo(found, user.email)) {
    logAuthEvent(
      ctx.logger,
      'info',
      { event: 'password_reset', outcome: 'failure', reason: 'invalid_code' },
      meta,
    );
    throw new PosternError('invalid_code');
  }
  await attempt.release();
  passwords.assertStrong(input.password, passwordContext(d, user));
  await passwords.assertNotBreached(input.password);
  const passwordHash = await passwords.hash(input.password);

  const at = ctx.clock.now();
  const { ended: sids, cleared } = await ctx.stores.transaction(async (tx) => {
    const used = await tx.resetCodes.consume(hash, at);
    if (!used || used.userId !== user.id || !mailedTo(used, user.email))
      throw new PosternError('invalid_code');
    await tx.users.setPassword(user.id, { passwordHash, changedAt: at });
    // The code came through the mailbox: the address is proven. If it never was, whoever set
    // the account up may not own the mailbox (a sign-up with someone else's address, waiting
    // for them): what they set up goes with the proof.
    const cleared = user.emailVerified ? null : await clearUnprovenSetup(tx, user.id);
    await tx.users.markEmailVerified(user.id);
    const ended = await tx.sessions.revokeAllForUser(user.id, at, { reason: 'password_reset' });
    await d.mfa.voidPending(user.id, tx);
    return { ended, cleared };
  });
  d.ended.add(sids);
  if (cleared) {
    logAuthEvent(
      ctx.logger,
      'warn',
      { event: 'unproven_setup_cleared', outcome: 'success', userId: user.id, ...cleared },
      meta,
    );
  }
  d.background.run('mail', () => ctx.mailer.send(passwordChangedMail(user.email, at, 'reset')));
  logAuthEvent(
    ctx.logger,
    'info',
    { event: 'password_reset', outcome: 'success', userId: user.id, sessionsEnded: sids.length },
    meta,
  );
}
