import type { MfaGate } from '../context.js';
import type { MfaSummary } from './api-types.js';

/** The `mfa` part of `GET /auth/me`: `{ enabled, methods }` (methods the user has confirmed
 *  and the host allows, strongest first), as the MFA area's gate reads them. */
export async function mfaSummary(gate: Pick<MfaGate, 'methods'>, userId: string): Promise<MfaSummary> {
  const methods = await gate.methods(userId);
  return { enabled: methods.length > 0, methods };
}
