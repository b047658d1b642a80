import { ConfigError } from '@postern/core';

export const DEFAULT_SCHEMA = 'postern';

/** A schema name goes into SQL text (identifiers cannot be bound), so only plain lower-case
 *  identifiers are accepted: no quoting tricks, no surprises with case folding. */
export function checkSchema(schema: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new ConfigError(`schema must match [a-z_][a-z0-9_]* (max 63 chars), got ${JSON.stringify(schema)}`);
  }
  return schema;
}

/** `"schema"."table"` for every table name used in SQL. */
export function qualifier(schema: string): (table: string) => string {
  const s = checkSchema(schema);
  return (table) => `"${s}"."${table}"`;
}
