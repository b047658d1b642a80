import type { MailReader, MailReaderLoader } from './mail-reader.js';

/** The package that implements `MailReader`: an optional peer dependency of core. */
export const MAIL_READER_PACKAGE = '@postern/inbox';

/** The mail reader is not installed: inbound mail waits in the outbox until it is. */
export class MailReaderMissing extends Error {
  constructor() {
    super(
      `${MAIL_READER_PACKAGE} is not installed: run \`npm install ${MAIL_READER_PACKAGE}\` to store ` +
        'inbound mail, then restart (the event stays in the outbox and is retried)',
    );
    this.name = 'MailReaderMissing';
  }
}

/** Node's "not found" for the package itself (ESM or CommonJS), not for a module it imports
 *  (that one's message names the package only in its path, unquoted). */
function isMissing(e: unknown): boolean {
  const { code, message } = (e ?? {}) as { code?: unknown; message?: unknown };
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    typeof message === 'string' &&
    message.includes(`'${MAIL_READER_PACKAGE}'`)
  );
}

/** A loader that runs `load` on first use and keeps its outcome, as Node keeps a module's: a
 *  package installed while the process runs is found only after a restart. A package that is
 *  not there throws `MailReaderMissing`; any other failure is thrown as it came. */
export function mailReaderLoader(load: () => Promise<MailReader>): MailReaderLoader {
  let loaded: Promise<MailReader> | undefined;
  return () => {
    loaded ??= load().catch((e: unknown) => {
      throw isMissing(e) ? new MailReaderMissing() : e;
    });
    return loaded;
  };
}

/** The installed `@postern/inbox`, imported when the first inbound mail needs it (an external
 *  import in both builds of core: its dependencies load only then, and only if installed). */
export const loadMailReader: MailReaderLoader = mailReaderLoader(async () => {
  const reader: MailReader = await import('@postern/inbox');
  return reader;
});
