import type { PosternContext } from '../context.js';
import type { RouteDef } from '../http/types.js';
import { createMfaApi, createMfaFlows } from './api.js';
import { type MfaEnv, registerMfaEnv } from './env.js';
import { createMfaGate } from './login.js';
import { resolveMfaConfig } from './options.js';
import { mfaRoutes } from './routes.js';
import { createSealer } from './seal.js';
import { mfaSummary } from './summary.js';

/** The MFA area: pending logins, factors, enrolment. Sets `ctx.mfa` for the auth area's login. */
export function createMfaArea(ctx: PosternContext) {
  const cfg = resolveMfaConfig(ctx.options);
  const env: MfaEnv = { ctx, cfg, sealer: createSealer(ctx.options.mfa?.encryptionKey, ctx.logger) };
  registerMfaEnv(env);
  const gate = createMfaGate(env);
  ctx.mfa = gate;
  const flows = createMfaFlows(env);
  const api = {
    ...createMfaApi(flows),
    /** MFA state of a user, as `GET /auth/me` shows it. */
    mfaSummary: (userId: string) => mfaSummary(ctx, userId),
  };
  const routes: RouteDef[] = mfaRoutes(env, flows);
  return { api, routes };
}
