import { StoreError } from '@postern/core';
import type { Queryable } from './db.js';

/** SQLSTATE unique_violation. */
export const UNIQUE_VIOLATION = '23505';

export function isUniqueViolation(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: unknown }).code === UNIQUE_VIOLATION;
}

/**
 * Insert-or-get on a unique key: `insert` is an `INSERT ... ON CONFLICT DO NOTHING RETURNING *`;
 * when it inserted nothing, `select` (a new statement, so a new snapshot) reads the row that won.
 * Tries again in the rare case that row vanished in between.
 */
export async function insertOrGet<R>(
  db: Queryable,
  insert: [string, unknown[]],
  select: [string, unknown[]],
): Promise<{ row: R; created: boolean }> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const ins = await db.query(insert[0], insert[1]);
    if (ins.rows[0]) return { row: ins.rows[0] as R, created: true };
    const sel = await db.query(select[0], select[1]);
    if (sel.rows[0]) return { row: sel.rows[0] as R, created: false };
  }
  throw new StoreError('insert-or-get kept conflicting');
}

/** Bytes from a `bytea` column as a plain Uint8Array (the driver hands out Buffers). */
export function bytes(b: Uint8Array): Uint8Array {
  return new Uint8Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}
