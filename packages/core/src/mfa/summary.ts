import type { MfaMethod, PosternContext } from '../context.js';
import { mfaEnvOf } from './env.js';
import { enabledMethods } from './factors.js';

/** The `mfa` part of `GET /auth/me`: `{ enabled, methods }` (methods the user has confirmed
 *  and the host allows, strongest first). */
export async function mfaSummary(
  ctx: PosternContext,
  userId: string,
): Promise<{ enabled: boolean; methods: MfaMethod[] }> {
  const methods = await enabledMethods(mfaEnvOf(ctx), userId);
  return { enabled: methods.length > 0, methods };
}
