import type { Logger } from '@postern/core';

/** One line a `recordingLogger` kept. */
export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
  msg?: string;
}

/** A logger that keeps every line, for tests that check what was (and was not) logged. */
export function recordingLogger(): { logger: Logger; lines: LogLine[]; warnings: () => LogLine['fields'][] } {
  const lines: LogLine[] = [];
  const at =
    (level: LogLine['level']) =>
    (fields: Record<string, unknown>, msg?: string): void => {
      lines.push(msg === undefined ? { level, fields } : { level, fields, msg });
    };
  const logger: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
  return { logger, lines, warnings: () => lines.filter((l) => l.level === 'warn').map((l) => l.fields) };
}
