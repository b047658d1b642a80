import type { User } from '../ports/user-store.js';
import type { MfaEnv } from './env.js';

const NAMES = { totp: 'An authenticator app', email: 'Email codes', webauthn: 'A passkey' } as const;

export type MfaNotice =
  | { kind: 'added' | 'removed'; method: keyof typeof NAMES }
  | { kind: 'recovery_used'; remaining: number }
  | { kind: 'recovery_regenerated' };

function text(n: MfaNotice): { subject: string; body: string } {
  const tail = 'If this was not you, reset your password and review your sign-in methods at once.';
  switch (n.kind) {
    case 'added':
      return {
        subject: 'A sign-in method was added to your account',
        body: `${NAMES[n.method]} was added as a second sign-in step on your account.\n\n${tail}`,
      };
    case 'removed':
      return {
        subject: 'A sign-in method was removed from your account',
        body: `${NAMES[n.method]} was removed from the second sign-in step of your account.\n\n${tail}`,
      };
    case 'recovery_used':
      return {
        subject: 'A recovery code was used to sign in',
        body: `A recovery code was used to sign in to your account. ${n.remaining} unused recovery codes remain.\n\n${tail}`,
      };
    case 'recovery_regenerated':
      return {
        subject: 'New recovery codes were created',
        body: `New recovery codes were created for your account; the old ones no longer work.\n\n${tail}`,
      };
  }
}

/** Mails the account owner about a change to their second step. Queued, never awaited: a
 *  slow mail server must not slow the request or reveal anything by timing. */
export function notifyOwner(env: MfaEnv, user: User, notice: MfaNotice): void {
  const { subject, body } = text(notice);
  env.ctx.mailer.send({ to: user.email, subject, text: body }).catch((e: unknown) => {
    env.ctx.logger.warn(
      {
        event: 'mail_failed',
        userId: user.id,
        reason: notice.kind,
        err: e instanceof Error ? e.message : 'error',
      },
      'mfa notice not sent',
    );
  });
}
