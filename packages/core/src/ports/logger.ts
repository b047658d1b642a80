/** pino-compatible structured logger: fields first, then a constant message.
 *  User input goes in fields, never inside `msg`. */
export interface Logger {
  debug(obj: Record<string, unknown>, msg?: string): void;
  info(obj: Record<string, unknown>, msg?: string): void;
  warn(obj: Record<string, unknown>, msg?: string): void;
  error(obj: Record<string, unknown>, msg?: string): void;
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** One JSON line per entry, time in UTC epoch ms (SECURITY.md Logging); the entry's fields
 *  never replace `level`, `time` or `msg`. A field JSON cannot hold (a BigInt, a cycle) leaves
 *  the message only. */
function line(level: string, obj: Record<string, unknown>, msg?: string): string {
  const time = Date.now();
  try {
    return JSON.stringify({ ...obj, level, time, msg });
  } catch {
    return JSON.stringify({ level, time, msg });
  }
}

/** The default when the host passes no logger: warnings and errors (a missing signing key or
 *  mailer, a refused webhook, a failing store) reach stderr, routine events stay quiet. */
export const warningsLogger: Logger = {
  debug() {},
  info() {},
  warn: (obj, msg) => console.warn(line('warn', obj, msg)),
  error: (obj, msg) => console.error(line('error', obj, msg)),
};
