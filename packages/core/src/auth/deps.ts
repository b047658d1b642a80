import type { MfaGate, PosternContext } from '../context.js';
import type { Background } from './background.js';
import type { EndedSessions } from './ended-sessions.js';
import type { AuthConfig } from './options.js';
import type { AuthPasswordService } from './passwords.js';

/** What every auth flow works with. */
export interface AuthDeps {
  ctx: PosternContext;
  config: AuthConfig;
  passwords: AuthPasswordService;
  ended: EndedSessions;
  background: Background;
  /** The MFA area's entry point for login, returned by `createMfaArea`. */
  mfa: MfaGate;
}
