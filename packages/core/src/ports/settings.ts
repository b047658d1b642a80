/** Runtime settings read per use (so a secret rotates without restart).
 *  Known key: `inbox.mail.webhook-secret` (one or more secrets, space separated). */
export interface Settings {
  get(key: string): string | undefined | Promise<string | undefined>;
}

/** A plain object works as settings too. */
export type SettingsInput = Settings | Record<string, string | undefined>;

/** A plain object is read on every `get`, not copied: a host that changes a key (a rotated
 *  webhook secret) is heard without a restart. Own keys only, never the prototype's. */
export function toSettings(input: SettingsInput | undefined): Settings {
  if (!input) return { get: () => undefined };
  if (typeof (input as Settings).get === 'function') return input as Settings;
  const values = input as Record<string, string | undefined>;
  return { get: (key) => (Object.hasOwn(values, key) ? values[key] : undefined) };
}
