import type { PosternContext } from '../context.js';
import type { MfaConfig } from './options.js';
import type { Sealer } from './seal.js';

/** What every MFA flow needs: the shared context, the resolved MFA options, the seed sealer. */
export interface MfaEnv {
  ctx: PosternContext;
  cfg: MfaConfig;
  sealer: Sealer;
}

export const nowSeconds = (env: MfaEnv): number => Math.floor(env.ctx.clock.now().getTime() / 1000);

export const addSeconds = (d: Date, s: number): Date => new Date(d.getTime() + s * 1000);
