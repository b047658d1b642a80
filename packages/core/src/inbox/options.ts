import type { PosternContext } from '../context.js';
import { ConfigError } from '../errors.js';
import type { Logger } from '../ports/logger.js';
import type { MailProvider } from '../ports/mail-provider.js';
import { integerOption } from '../util/integer-option.js';
import type { InboxOptions, ProviderConfig } from './option-types.js';
import { resendProvider } from './provider-client.js';

export type { InboxOptions } from './option-types.js';

export interface ResolvedInboxOptions {
  windowMs: number;
  maxAttachmentBytes: number;
  pageSize: number;
  canCreateAccount: NonNullable<InboxOptions['canCreateAccount']>;
  notificationLeaseMs: number;
  attachmentBudgetMs: number;
  unmatchedEventRetentionMs: number;
  mailEventRetentionMs: number;
}

const DAY = 86_400_000;
/** Most threads one page may hold (`inbox.pageSize`, and `?limit=` of the thread list). */
export const MAX_PAGE_SIZE = 200;

export function resolveInboxOptions(o: InboxOptions = {}): ResolvedInboxOptions {
  const days = o.threadingWindowDays ?? 90;
  if (!(days > 0)) throw new ConfigError('inbox.threadingWindowDays must be positive');
  const pageSize = integerOption('inbox.pageSize', o.pageSize, 50);
  if (pageSize > MAX_PAGE_SIZE) throw new ConfigError(`inbox.pageSize must be at most ${MAX_PAGE_SIZE}`);
  return {
    windowMs: days * DAY,
    maxAttachmentBytes: integerOption('inbox.maxAttachmentBytes', o.maxAttachmentBytes, 25 * 1024 * 1024),
    pageSize,
    canCreateAccount: o.canCreateAccount ?? (() => true),
    notificationLeaseMs: integerOption('inbox.notificationLeaseMs', o.notificationLeaseMs, 5 * 60_000),
    attachmentBudgetMs: integerOption('inbox.attachmentBudgetMs', o.attachmentBudgetMs, 2 * 60_000),
    unmatchedEventRetentionMs: integerOption(
      'inbox.unmatchedEventRetentionMs',
      o.unmatchedEventRetentionMs,
      7 * DAY,
    ),
    mailEventRetentionMs: integerOption('inbox.mailEventRetentionMs', o.mailEventRetentionMs, 90 * DAY),
  };
}

const isPort = (p: object): p is MailProvider =>
  typeof (p as Partial<MailProvider>).getReceivedEmail === 'function';

/** The `provider` option as a port: a given port as is; a config with a token becomes the
 *  Resend-compatible client; no token means no provider. */
export function resolveProvider(
  option: PosternContext['options']['provider'],
  opts: { maxAttachmentBytes: number; logger: Logger },
): MailProvider | null {
  if (!option) return null;
  if (isPort(option)) return option;
  const config = option as ProviderConfig;
  if (!config.token) {
    // Bodies then come from the payload only, and replies go through the mailer: say so once,
    // since a URL without its token is more likely a missing secret than a choice.
    if (config.apiUrl)
      opts.logger.warn(
        { event: 'config_warning', reason: 'provider_without_token' },
        'provider.apiUrl is set without provider.token: no provider fetch, replies go through the mailer',
      );
    return null;
  }
  return resendProvider({ maxAttachmentBytes: opts.maxAttachmentBytes, ...config, token: config.token });
}
