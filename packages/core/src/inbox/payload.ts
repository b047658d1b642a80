import type { DeliveredEvent } from '../outbox/types.js';
import type { Clock } from '../ports/clock.js';
import { parseWellFormedJson } from '../util/text.js';

/** The raw webhook body of an outbox event as a JSON object; `null` when it is not one. */
export function parsePayload(payload: string): Record<string, unknown> | null {
  try {
    const v = parseWellFormedJson(payload);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const MAX_TIME = Date.UTC(10000, 0, 1);

/** A time a store can keep, or null: also out of reach are years a database cannot store
 *  (Postgres stops at 4713 BC and 294276 AD), which would fail an insert on every retry. No
 *  provider event predates 1970 or follows 9999. */
export function storableDate(v: string | Date): Date | null {
  const t = new Date(v).getTime();
  return t >= 0 && t < MAX_TIME ? new Date(t) : null;
}

/** When the webhook was accepted: the event's `createdAt` (a host re-queuing events as JSON
 *  hands over a string), or now when it holds no storable time. What a payload leaves out falls
 *  back to this, not to when a worker got to the event (a retry can come an hour later). */
export function acceptedAt(event: DeliveredEvent, clock: Clock): Date {
  const at = event.createdAt as Date | string | null | undefined;
  return (at == null ? null : storableDate(at)) ?? clock.now();
}
