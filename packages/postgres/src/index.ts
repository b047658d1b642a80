export type { PoolClientLike, PoolLike, Queryable, QueryResultLike } from './db.js';
export { isUnavailable } from './db.js';
export { type MigrateOptions, type MigrateResult, migrate } from './migrate.js';
export { DEFAULT_SCHEMA } from './schema.js';
export { type PostgresSettings, type PostgresSettingsOptions, postgresSettings } from './settings.js';
export { type PostgresStoresOptions, postgresStores } from './stores.js';
