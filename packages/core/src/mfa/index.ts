import type { MfaGate, PosternContext } from '../context.js';
import { createMfaApi, createMfaFlows } from './api.js';
import type { MfaApi } from './api-types.js';
import type { MfaEnv } from './env.js';
import { createMfaGate } from './login.js';
import { resolveMfaConfig } from './options.js';
import { mfaRoutes } from './routes.js';
import { createSealer } from './seal.js';
import { mfaSummary } from './summary.js';

/** What the MFA area is built from: the shared context (sessions, passwords, throttle). */
export interface MfaAreaDeps {
  ctx: PosternContext;
}

/** The MFA area: pending logins, factors, enrolment. Returns its gate for the auth area's
 *  login alongside its API and routes. */
export function createMfaArea({ ctx }: MfaAreaDeps) {
  const cfg = resolveMfaConfig(ctx.options);
  const env: MfaEnv = { ctx, cfg, sealer: createSealer(ctx.options.mfa?.encryptionKey, ctx.logger) };
  const gate: MfaGate = createMfaGate(env);
  const flows = createMfaFlows(env);
  const api: MfaApi = { ...createMfaApi(flows), summary: (userId) => mfaSummary(gate, userId) };
  const routes = mfaRoutes(env, flows);
  return { gate, api, routes };
}
