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
