import { createAuthApi, createAuthFlows } from './api.js';
import { createBearerCheck } from './bearer-check.js';
import type { AuthDeps } from './deps.js';
import { authRoutes } from './routes.js';
import type { SessionService } from './sessions.js';

/** What the auth area is built from: the shared services (`createAuthServices`) and the MFA
 *  area's gate. */
export type AuthAreaDeps = AuthDeps & { sessions: SessionService };

/** The auth area: its library API, its routes, and Bearer verification for every area. */
export function createAuthArea(deps: AuthAreaDeps) {
  const { ctx, config, ended, sessions } = deps;
  const d: AuthDeps = {
    ctx,
    config,
    passwords: deps.passwords,
    ended,
    background: deps.background,
    mfa: deps.mfa,
  };
  const bearer = createBearerCheck(ctx, config.audience, ended);
  const cookies = config.cookieSessions;
  // Without the prefix, a page on a plain-http sibling of the host can plant a cookie of this
  // name (docs/browser.md); fine on a development machine, worth a line anywhere else.
  if (cookies?.plainOrigin !== undefined)
    ctx.logger.warn(
      {
        event: 'config_warning',
        reason: 'cookie_prefix_dropped',
        name: cookies.name,
        origin: cookies.plainOrigin,
      },
      'refresh cookie set without the __Secure- prefix: a trusted origin is plain http',
    );

  const flows = createAuthFlows(d, sessions, bearer);
  const routes = authRoutes(flows, {
    signup: config.signup,
    emailVerification: config.emailVerification,
    emailChange: config.emailChange,
  });
  return {
    api: createAuthApi(flows),
    routes,
    /** The principal of a request's `Authorization` header (401 `invalid_token`, logged). */
    authenticateHeader: bearer.header,
    /** Browser sessions (the refresh cookie), resolved; null when off. */
    cookieSessions: config.cookieSessions,
  };
}
