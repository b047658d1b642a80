import { randomUUID } from 'node:crypto';
import { PosternError } from '../errors.js';
import type { AuthDeps } from './deps.js';
import { ipOf, logAuthEvent, type RequestMeta } from './log.js';
import { contextWords } from './strength.js';

export interface SignupInput {
  name: string;
  /** Canonical email. */
  email: string;
  password: string;
}

/** Words a guesser tries first for this account: its email and name, and the service's hosts. */
export function passwordContext(d: AuthDeps, user: { email: string; name: string }): string[] {
  const host = (s: string) => {
    try {
      return new URL(s).hostname;
    } catch {
      return s;
    }
  };
  return contextWords([user.email, user.name, host(d.config.issuer), host(d.config.audience)]);
}

/** Registration. 409 `email_taken` for a registered email (a documented deviation: docs/auth.md). */
export async function signup(d: AuthDeps, input: SignupInput, meta: RequestMeta) {
  const { ctx, passwords, config } = d;
  await ctx.throttle.hit('signup:ip', ipOf(meta));
  passwords.assertStrong(input.password, passwordContext(d, input));
  await passwords.assertNotBreached(input.password);
  if (await ctx.stores.users.findByEmail(input.email)) throw taken(d, meta);
  const now = ctx.clock.now();
  const user = await ctx.stores.users.create({
    id: randomUUID(),
    email: input.email,
    name: input.name,
    passwordHash: await passwords.hash(input.password),
    roles: [...config.defaultRoles],
    emailVerified: false,
    disabled: false,
    createdAt: now,
    passwordChangedAt: now,
  });
  if (!user) throw taken(d, meta);
  logAuthEvent(ctx.logger, 'info', { event: 'signup', outcome: 'success', userId: user.id }, meta);
  return { user: { id: user.id, email: user.email, name: user.name } };
}

function taken(d: AuthDeps, meta: RequestMeta): PosternError {
  logAuthEvent(d.ctx.logger, 'info', { event: 'signup', outcome: 'failure', reason: 'email_taken' }, meta);
  return new PosternError('email_taken');
}
