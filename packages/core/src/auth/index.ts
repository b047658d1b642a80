import type { PosternContext } from '../context.js';
import { PosternError } from '../errors.js';
import type { Principal } from '../http/types.js';
import { verifyAccessToken } from '../tokens/access-token.js';
import { createAuthApi, createAuthFlows } from './api.js';
import { createBackground } from './background.js';
import type { AuthDeps } from './deps.js';
import { createEndedSessions } from './ended-sessions.js';
import { logAuthEvent, type RequestMeta } from './log.js';
import { resolveAuthConfig } from './options.js';
import { createPasswordService } from './passwords.js';
import { authRoutes } from './routes.js';
import { createSessionService } from './sessions.js';
import { createThrottle } from './throttle.js';

/** Clock tolerance of token checks (keyring), kept in the ended-sessions retention too. */
const CLOCK_TOLERANCE_SECONDS = 30;

/** The auth area: its library API, its routes, and Bearer verification for every area.
 *  Sets `ctx.sessions`, `ctx.passwords` and `ctx.throttle` for the other areas. */
export function createAuthArea(ctx: PosternContext) {
  const config = resolveAuthConfig(ctx.options);
  const passwords = createPasswordService(config);
  const ended = createEndedSessions({
    store: ctx.stores.sessions,
    clock: ctx.clock,
    logger: ctx.logger,
    retainSeconds: config.accessTokenTtlSeconds + CLOCK_TOLERANCE_SECONDS + 5,
  });
  const d: AuthDeps = { ctx, config, passwords, ended, background: createBackground(ctx.logger) };

  ctx.passwords = passwords;
  ctx.throttle = createThrottle({
    port: ctx.stores.limiter,
    clock: ctx.clock,
    logger: ctx.logger,
    limits: config.throttle,
  });
  const sessions = createSessionService(d);
  ctx.sessions = sessions.issuer;

  /** Bearer check: signature and claims, then the in-memory ended set (no store round trip). */
  async function authenticate(token: string, meta?: RequestMeta | null): Promise<Principal> {
    const principal = await verifyAccessToken(ctx.keyring, config.audience, token);
    if (await ended.has(principal.sid)) {
      logAuthEvent(
        ctx.logger,
        'info',
        {
          event: 'authorization_denied',
          outcome: 'failure',
          reason: 'session_ended',
          userId: principal.userId,
          sid: principal.sid,
        },
        meta,
      );
      throw new PosternError('invalid_token');
    }
    return principal;
  }

  const flows = createAuthFlows(d, sessions, authenticate);
  const routes = authRoutes(flows, {
    signup: config.signup,
    emailVerification: config.emailVerification,
    emailChange: config.emailChange,
    jwks: () => ctx.keyring.jwks(),
  });
  return {
    api: createAuthApi(flows),
    routes,
    authenticate,
    /** Browser sessions (the refresh cookie), resolved; null when off. */
    cookieSessions: config.cookieSessions,
    /** Stops the ended-sessions poller and waits for queued mails and rehashes. */
    async close(): Promise<void> {
      ended.stop();
      await d.background.drain();
    },
  };
}
