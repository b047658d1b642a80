import { ConfigError, createPostern } from '@postern/core';
import { type Env, readConfig } from './config.js';
import type { Running } from './main.js';

/** `pnpm worker` of both examples: outbox workers only, no HTTP. Needs DATABASE_URL, since
 *  in-memory stores are not shared with the process that takes the webhooks in. */
export async function runWorker(env: Env = process.env): Promise<Running> {
  if (!env.DATABASE_URL) {
    throw new ConfigError(
      'The worker needs DATABASE_URL: in-memory stores are not shared between processes.',
    );
  }
  const config = await readConfig({ ...env, WORKERS: env.WORKERS === '0' ? '1' : env.WORKERS });
  const ph = createPostern(config.postern);
  ph.outbox.start();
  config.logger.info({ event: 'worker_started', concurrency: Math.max(1, config.workers) }, 'worker started');

  return {
    async close() {
      await ph.close();
      await config.close();
    },
  };
}
