import type { PosternBase, PosternContext } from '../context.js';
import { type Background, createBackground } from './background.js';
import { createEndedSessions, type EndedSessions } from './ended-sessions.js';
import { type AuthConfig, resolveAuthConfig } from './options.js';
import { type AuthPasswordService, createPasswordService } from './passwords.js';
import { createSessionService, type SessionService } from './sessions.js';
import { createThrottle } from './throttle.js';

/** Clock tolerance of token checks (keyring), kept in the ended-sessions retention too. */
const CLOCK_TOLERANCE_SECONDS = 30;

/** The services built from the auth area's options that more than the auth area uses
 *  (sessions, passwords, the throttle), with what they need of their own. */
export interface AuthServices {
  config: AuthConfig;
  passwords: AuthPasswordService;
  ended: EndedSessions;
  background: Background;
  sessions: SessionService;
  /** The shared context: the base and the services every area works with. */
  ctx: PosternContext;
  /** Stops the ended-sessions poller and waits for queued mails and rehashes. */
  close(): Promise<void>;
}

/** Builds the shared services on the base, before any area exists. */
export function createAuthServices(base: PosternBase): AuthServices {
  const config = resolveAuthConfig(base.options);
  const passwords = createPasswordService(config);
  const ended = createEndedSessions({
    store: base.stores.sessions,
    clock: base.clock,
    logger: base.logger,
    retainSeconds: config.accessTokenTtlSeconds + CLOCK_TOLERANCE_SECONDS + 5,
  });
  const background = createBackground(base.logger);
  const throttle = createThrottle({
    port: base.stores.limiter,
    clock: base.clock,
    logger: base.logger,
    limits: config.throttle,
  });
  const sessions = createSessionService({ ctx: base, config, ended });
  const ctx: PosternContext = { ...base, sessions: sessions.issuer, passwords, throttle };
  return {
    config,
    passwords,
    ended,
    background,
    sessions,
    ctx,
    async close() {
      ended.stop();
      await background.drain();
    },
  };
}
