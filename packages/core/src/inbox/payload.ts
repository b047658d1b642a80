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

/** When the webhook was accepted: the event's `createdAt` (a host re-queuing events as JSON
 *  hands over a string), or now when it holds no time. What a payload leaves out falls back to
 *  this, not to when a worker got to the event (a retry can come an hour later). */
export function acceptedAt(event: DeliveredEvent, clock: Clock): Date {
  const at = new Date(event.createdAt as Date | string);
  return Number.isNaN(at.getTime()) ? clock.now() : at;
}
