/** What a log line says about a caught value: an Error's message, or the value as text. */
export const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** What lies under a wrapped error (a `StoreError`'s "database unavailable"): the driver's
 *  message, which names the address it could not reach; a refused dual-stack connect is an
 *  AggregateError of one error per address tried. `undefined` when nothing lies under it. */
export function causeMessage(e: unknown): string | undefined {
  const cause = e instanceof Error ? e.cause : undefined;
  if (cause instanceof AggregateError && cause.errors.length > 0)
    return cause.errors.map(errorMessage).join('; ');
  return cause === undefined ? undefined : errorMessage(cause);
}
