import type { PosternContext } from '../context.js';
import type { FileStore } from '../ports/file-store.js';
import type { MailProvider } from '../ports/mail-provider.js';
import type { Notifier } from '../ports/notifier.js';
import type { MailReaderLoader } from './mail-reader.js';

/** What the inbox's flows and consumers work with: the shared context and the inbox's own
 *  collaborators, resolved by `createInboxArea` from the options. */
export interface InboxContext extends PosternContext {
  /** The provider API client; `null` when no token is configured. */
  provider: MailProvider | null;
  /** Attachment bytes. */
  files: FileStore;
  /** Owner/member notifications. */
  notifier: Notifier;
  /** MIME parsing, HTML to text and header words (`@postern/inbox`, loaded on first use). */
  mailReader: MailReaderLoader;
}
