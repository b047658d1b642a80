import type { PosternContext } from '../context.js';
import { PosternError } from '../errors.js';
import type { Principal } from '../http/types.js';
import type { User } from '../ports/user-store.js';
import type { AuthDeps } from './deps.js';
import { logAuthEvent } from './log.js';

/** The live user behind a principal; 401 `invalid_token` when gone or disabled. */
export async function userOf(d: { ctx: PosternContext }, principal: Principal): Promise<User> {
  const user = await d.ctx.stores.users.findById(principal.userId);
  if (!user || user.disabled) throw new PosternError('invalid_token');
  return user;
}

/** `GET /auth/me`: the user behind a valid access token. */
export async function me(d: AuthDeps, principal: Principal) {
  const user = await userOf(d, principal);
  // The MFA area answers through its gate: the auth area does not import it.
  const methods = await d.mfa.methods(user.id);
  const mfa = { enabled: methods.length > 0, methods };
  return {
    user: {
      id: user.id,
      email: user.email,
      name: user.name,
      roles: user.roles,
      emailVerified: user.emailVerified,
      mfa,
    },
  };
}

/** `GET /auth/roles`: the roles of the authenticated user. */
export async function roles(d: AuthDeps, principal: Principal) {
  return { roles: (await userOf(d, principal)).roles };
}

/** Host-side administration (no HTTP route): each ends the user's sessions where it must. */
export function createAdmin(d: AuthDeps) {
  const { ctx } = d;
  const log = (event: string, userId: string | null, extra: Record<string, unknown> = {}) =>
    logAuthEvent(ctx.logger, 'info', { event, outcome: 'success', userId, ...extra });

  return {
    /** Disables the account: its sessions end now and it cannot log in until enabled. */
    async disableUser(userId: string): Promise<void> {
      if (!(await ctx.stores.users.setDisabled(userId, true))) throw new PosternError('not_found');
      await ctx.sessions.endAll(userId, { reason: 'user_disabled' });
      await d.mfa.voidPending(userId);
      log('user_disabled', userId);
    },
    async enableUser(userId: string): Promise<void> {
      if (!(await ctx.stores.users.setDisabled(userId, false))) throw new PosternError('not_found');
      log('user_enabled', userId);
    },
    /** Ends every session, then deletes the account. Disabled first: a login checking the
     *  password meanwhile then sees it (credentials-unchanged.ts) or made its session before the
     *  sessions are ended. */
    async deleteUser(userId: string): Promise<void> {
      if (!(await ctx.stores.users.setDisabled(userId, true))) throw new PosternError('not_found');
      await ctx.sessions.endAll(userId, { reason: 'user_deleted' });
      await d.mfa.voidPending(userId);
      await ctx.stores.users.delete(userId);
      log('user_deleted', userId);
    },
    async setRoles(userId: string, roles: string[]): Promise<void> {
      if (!(await ctx.stores.users.setRoles(userId, roles))) throw new PosternError('not_found');
      log('roles_changed', userId, { roles });
    },
    /** Ends every session of one user, or of everyone (e.g. after a signing-key compromise). */
    async revokeSessions(target: { userId: string } | { all: true }): Promise<{ revoked: number }> {
      const now = ctx.clock.now();
      if ('userId' in target) {
        const sids = await ctx.stores.sessions.revokeAllForUser(target.userId, now, { reason: 'revoked' });
        d.ended.add(sids);
        log('sessions_ended', target.userId, { count: sids.length, reason: 'revoked' });
        return { revoked: sids.length };
      }
      const revoked = await ctx.stores.sessions.revokeAll(now, 'revoked_all');
      // Every sid ended: read them back so this instance refuses them before its next poll.
      const page = await ctx.stores.sessions.endedSince(null, now);
      d.ended.add(page.sids);
      log('sessions_ended', null, { count: revoked, reason: 'revoked_all' });
      return { revoked };
    },
  };
}
