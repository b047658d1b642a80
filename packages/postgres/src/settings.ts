import type { Settings } from '@postern/core';
import { guarded, type PoolLike } from './db.js';
import { DEFAULT_SCHEMA, qualifier } from './schema.js';

export interface PostgresSettingsOptions {
  pool: PoolLike;
  schema?: string;
  /** How long a read value is reused (ms). Default 1000: a rotated secret is live everywhere
   *  within a second, and a webhook burst costs one query per second, not one per request. */
  cacheMs?: number;
}

export interface PostgresSettings extends Settings {
  get(key: string): Promise<string | undefined>;
  /** Stores `value` (or deletes the key with `undefined`); this process sees it at once. */
  set(key: string, value: string | undefined): Promise<void>;
}

/** The Settings port on the `settings` table, for values every instance must share
 *  (`createPostern({ settings: postgresSettings({ pool }) })`). */
export function postgresSettings(opts: PostgresSettingsOptions): PostgresSettings {
  const db = guarded(opts.pool);
  const T = qualifier(opts.schema ?? DEFAULT_SCHEMA)('settings');
  const ttl = opts.cacheMs ?? 1000;
  const cache = new Map<string, { value: string | undefined; until: number }>();

  return {
    async get(key) {
      const hit = cache.get(key);
      if (hit && hit.until > Date.now()) return hit.value;
      const r = await db.query(`SELECT value FROM ${T} WHERE key = $1`, [key]);
      const value = (r.rows[0]?.value as string | undefined) ?? undefined;
      cache.set(key, { value, until: Date.now() + ttl });
      return value;
    },
    async set(key, value) {
      if (value === undefined) await db.query(`DELETE FROM ${T} WHERE key = $1`, [key]);
      else {
        await db.query(
          `INSERT INTO ${T} (key, value, updated_at) VALUES ($1, $2, now())
           ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
          [key, value],
        );
      }
      cache.delete(key);
    },
  };
}
