import { ConfigError, type Logger } from '@postern/core';

const levels = { debug: 20, info: 30, warn: 40, error: 50 } as const;
export type Level = keyof typeof levels;

/** `LOG_LEVEL` as a level; anything else is a start-up error. */
export function logLevel(raw: string | undefined): Level {
  if (raw === undefined || raw === '') return 'info';
  if (raw in levels) return raw as Level;
  throw new ConfigError(
    `LOG_LEVEL must be one of ${Object.keys(levels).join(', ')}, got ${JSON.stringify(raw)}`,
  );
}

/** pino-style JSON lines on stdout (UTC epoch ms, numeric level, fields, constant message). */
export function jsonLogger(
  minLevel: Level = 'info',
  write: (line: string) => void = (l) => process.stdout.write(l),
): Logger {
  const log = (level: Level) => (obj: Record<string, unknown>, msg?: string) => {
    if (levels[level] < levels[minLevel]) return;
    write(`${JSON.stringify({ level: levels[level], time: Date.now(), ...obj, msg })}\n`);
  };
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}
