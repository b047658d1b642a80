import type { GatehouseContext } from '../context.js';
import type { Background } from './background.js';
import type { EndedSessions } from './ended-sessions.js';
import type { AuthConfig } from './options.js';
import type { AuthPasswordService } from './passwords.js';

/** What every auth flow works with. */
export interface AuthDeps {
  ctx: GatehouseContext;
  config: AuthConfig;
  passwords: AuthPasswordService;
  ended: EndedSessions;
  background: Background;
}
