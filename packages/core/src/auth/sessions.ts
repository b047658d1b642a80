import { randomUUID } from 'node:crypto';
import type { PosternBase, SessionAnswer, SessionIssuer } from '../context.js';
import { PosternError } from '../errors.js';
import { markCookieSession } from '../http/refresh-cookie.js';
import type { Principal } from '../http/types.js';
import type { Session } from '../ports/session-store.js';
import { signAccessToken } from '../tokens/access-token.js';
import { randomToken, sha256, successorToken } from '../tokens/opaque.js';
import { credentialsUnchanged } from './credentials-unchanged.js';
import type { EndedSessions } from './ended-sessions.js';
import { logAuthEvent, type RequestMeta } from './log.js';
import type { AuthConfig } from './options.js';
import { tooMany } from './throttle.js';

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

function isLive(s: Session, now: Date): boolean {
  const t = now.getTime();
  return s.endedAt === null && t < s.expiresAt.getTime() && t < s.idleExpiresAt.getTime();
}

/** Sessions as refresh-token families: issue, rotate (with reuse detection), end. */
export function createSessionService(d: { ctx: PosternBase; config: AuthConfig; ended: EndedSessions }) {
  const { ctx, config, ended } = d;
  const store = () => ctx.stores.sessions;

  const accessToken = (s: { userId: string; id: string; authTime: Date; amr: string[] }) =>
    signAccessToken(
      ctx.keyring,
      { audience: config.audience, ttlSeconds: config.accessTokenTtlSeconds },
      { userId: s.userId, sid: s.id, authTime: seconds(s.authTime), amr: s.amr },
    );

  /** The answer of a new or refreshed session. A cookie session's is marked for the HTTP layer,
   *  which moves the refresh token into the cookie, good for what is left of the session. */
  const answer = (s: Session, token: string, refreshToken: string | undefined, now: Date): SessionAnswer => {
    const a: SessionAnswer = {
      accessToken: token,
      tokenType: 'Bearer',
      expiresIn: config.accessTokenTtlSeconds,
      ...(refreshToken === undefined ? {} : { refreshToken }),
    };
    if (refreshToken === undefined || !s.cookie || !config.cookieSessions) return a;
    const end = Math.min(s.expiresAt.getTime(), s.idleExpiresAt.getTime());
    return markCookieSession(a, Math.floor((end - now.getTime()) / 1000));
  };

  const idleEnd = (now: Date) => new Date(now.getTime() + config.refreshIdleSeconds * 1000);

  const issuer: SessionIssuer = {
    async issue(user, opts) {
      const userId = user.id;
      const now = ctx.clock.now();
      const refreshToken = opts.refresh ? randomToken() : undefined;
      // Without a refresh token the session ends with its one access token.
      const expiresAt = new Date(
        now.getTime() + (refreshToken ? config.refreshTokenTtlSeconds : config.accessTokenTtlSeconds) * 1000,
      );
      const session: Session = {
        id: randomUUID(),
        userId,
        createdAt: now,
        expiresAt,
        idleExpiresAt: refreshToken
          ? new Date(Math.min(idleEnd(now).getTime(), expiresAt.getTime()))
          : expiresAt,
        lastUsedAt: now,
        authTime: opts.authTime === undefined ? now : new Date(opts.authTime * 1000),
        amr: [...opts.amr],
        ip: opts.ip,
        userAgent: opts.userAgent?.slice(0, 256) ?? null,
        ...(refreshToken && opts.refresh === 'cookie' ? { cookie: true } : {}),
        endedAt: null,
        endReason: null,
      };
      const evicted = await store().create(
        session,
        refreshToken ? { hash: sha256(refreshToken), idleExpiresAt: session.idleExpiresAt } : null,
        { maxPerUser: config.maxSessionsPerUser },
      );
      if (evicted.length > 0) {
        ended.add(evicted);
        logAuthEvent(ctx.logger, 'info', {
          event: 'session_evicted',
          outcome: 'success',
          userId,
          count: evicted.length,
        });
      }
      // A reset, change or disable that committed while the credentials were being checked
      // could not end this session (it did not exist yet): nobody holds its tokens, end it.
      if (!(await credentialsUnchanged(ctx.stores, user))) {
        await store().revoke(session.id, ctx.clock.now(), 'credentials_changed');
        return null;
      }
      return { sid: session.id, answer: answer(session, await accessToken(session), refreshToken, now) };
    },

    async endAll(userId, opts) {
      const sids = await store().revokeAllForUser(userId, ctx.clock.now(), {
        reason: opts?.reason ?? 'revoked',
        exceptSid: opts?.exceptSid,
      });
      ended.add(sids);
      logAuthEvent(ctx.logger, 'info', {
        event: 'sessions_ended',
        outcome: 'success',
        reason: opts?.reason ?? 'revoked',
        userId,
        count: sids.length,
      });
    },
  };

  /** Rotate first: the live token's refresh is one store call. Only a refused rotation looks
   *  the token up, to tell an unknown or ended one from a reused one. */
  async function refresh(token: string, meta: RequestMeta): Promise<SessionAnswer> {
    const hash = sha256(token);
    const now = ctx.clock.now();
    // Derived, not drawn: a cookie session's store keeps the salt, so a repeat of this token
    // within the reuse window derives this very successor again (docs/decisions/0151).
    const salt = randomToken();
    const next = successorToken(token, salt);
    const budget = config.throttle['refresh:session'];
    const rotated = await store().rotate(
      hash,
      { hash: sha256(next), idleExpiresAt: idleEnd(now), salt },
      now,
      {
        graceSeconds: config.refreshReuseGraceSeconds,
        cookieGraceSeconds: config.cookieSessions?.reuseWindowSeconds ?? 0,
        budget: { rotations: budget.points, windowSeconds: budget.durationSeconds },
      },
    );
    // Refused for the session's rotation budget (a loop, not a person): the token stays good
    // for a later refresh, a grace repeat included. Logged once, as every 429 is (decision 0112).
    if (rotated && 'refused' in rotated) {
      throw tooMany('refresh:session', rotated.retryAt.getTime() - now.getTime());
    }
    // Another tab (or request) rotated this cookie a moment ago: the same newest token again.
    if (rotated && 'repeat' in rotated) {
      const s = rotated.session;
      logAuthEvent(
        ctx.logger,
        'info',
        { event: 'refresh', outcome: 'success', reason: 'reuse_window', userId: s.userId, sid: s.id },
        meta,
      );
      return answer(s, await accessToken(s), successorToken(token, rotated.salt), now);
    }
    if (rotated) {
      logAuthEvent(
        ctx.logger,
        'info',
        { event: 'refresh', outcome: 'success', userId: rotated.userId, sid: rotated.id },
        meta,
      );
      return answer(rotated, await accessToken(rotated), next, now);
    }
    const found = await store().findByToken(hash);
    if (!found || !isLive(found.session, now)) {
      logAuthEvent(
        ctx.logger,
        'info',
        {
          event: 'refresh',
          outcome: 'failure',
          reason: found ? 'session_ended' : 'unknown_token',
          userId: found?.session.userId,
          sid: found?.session.id,
        },
        meta,
      );
      throw new PosternError('invalid_token');
    }
    const s = found.session;
    // An unused token of a live family is no reuse, whatever refused it (a race the store could
    // not settle, a successor hash already taken): try again in a moment, the session lives.
    if (found.usedAt === null) throw new PosternError('unavailable', { retryAfter: 1 });
    // A live family whose token was already rotated: theft, or a lost race. The family ends.
    if (await store().revoke(s.id, now, 'refresh_reuse')) ended.add([s.id]);
    logAuthEvent(
      ctx.logger,
      'warn',
      { event: 'refresh_reuse', outcome: 'failure', reason: 'token_reused', userId: s.userId, sid: s.id },
      meta,
    );
    throw new PosternError('invalid_token');
  }

  /** Ends the family of `token`. Unknown or already-ended tokens are accepted silently
   *  (RFC 7009 style; docs/decisions/0102). */
  async function logout(token: string, meta: RequestMeta): Promise<void> {
    const found = await store().findByToken(sha256(token));
    if (!found) return;
    const { session: s } = found;
    if (await store().revoke(s.id, ctx.clock.now(), 'logout')) {
      ended.add([s.id]);
      logAuthEvent(
        ctx.logger,
        'info',
        { event: 'logout', outcome: 'success', userId: s.userId, sid: s.id },
        meta,
      );
    }
  }

  async function list(principal: Principal) {
    const sessions = await store().listForUser(principal.userId, ctx.clock.now());
    return sessions.map((s) => ({
      id: s.id,
      current: s.id === principal.sid,
      createdAt: s.createdAt.toISOString(),
      lastUsedAt: s.lastUsedAt.toISOString(),
      expiresAt: new Date(Math.min(s.expiresAt.getTime(), s.idleExpiresAt.getTime())).toISOString(),
      authTime: s.authTime.toISOString(),
      amr: s.amr,
      ip: s.ip,
      userAgent: s.userAgent,
    }));
  }

  /** Ends one of the caller's own sessions; anyone else's id is 404 (no oracle). */
  async function revokeOwn(principal: Principal, sid: string, meta: RequestMeta): Promise<void> {
    const s = await store().findById(sid);
    const now = ctx.clock.now();
    if (!s || s.userId !== principal.userId || !isLive(s, now)) {
      logAuthEvent(
        ctx.logger,
        'info',
        {
          event: 'authorization_denied',
          outcome: 'failure',
          reason: 'not_own_session',
          userId: principal.userId,
        },
        meta,
      );
      throw new PosternError('not_found');
    }
    if (await store().revoke(sid, now, 'revoked')) ended.add([sid]);
    logAuthEvent(
      ctx.logger,
      'info',
      { event: 'session_revoked', outcome: 'success', userId: principal.userId, sid },
      meta,
    );
  }

  return { issuer, refresh, logout, list, revokeOwn };
}

export type SessionService = ReturnType<typeof createSessionService>;
