/** What a log line says about a caught value: an Error's message, or the value as text. */
export const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e));
