/** pino-compatible structured logger: fields first, then a constant message.
 *  User input goes in fields, never inside `msg`. */
export interface Logger {
  debug(obj: Record<string, unknown>, msg?: string): void;
  info(obj: Record<string, unknown>, msg?: string): void;
  warn(obj: Record<string, unknown>, msg?: string): void;
  error(obj: Record<string, unknown>, msg?: string): void;
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

type Level = 'debug' | 'info' | 'warn' | 'error';
const RANK: Record<Level, number> = { debug: 0, info: 1, warn: 2, error: 3 };

/** One JSON line per entry, time in UTC epoch ms (docs/auth.md, Logging); the entry's fields
 *  never replace `level`, `time` or `msg`. A field JSON cannot hold (a BigInt, a cycle) leaves
 *  the message only. */
function line(level: Level, obj: Record<string, unknown>, msg?: string): string {
  const time = Date.now();
  try {
    return JSON.stringify({ ...obj, level, time, msg });
  } catch {
    return JSON.stringify({ level, time, msg });
  }
}

/** A logger writing entries from `min` up as JSON lines (without the newline) to `write`. */
export function jsonLinesLogger(write: (line: string, level: Level) => void, min: Level = 'info'): Logger {
  const at =
    (level: Level) =>
    (obj: Record<string, unknown>, msg?: string): void => {
      if (RANK[level] >= RANK[min]) write(line(level, obj, msg), level);
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** The default when the host passes no logger: warnings and errors (a missing signing key or
 *  mailer, a refused webhook, a failing store) reach stderr, routine events stay quiet. */
export const warningsLogger: Logger = jsonLinesLogger(
  (l, level) => (level === 'error' ? console.error(l) : console.warn(l)),
  'warn',
);
