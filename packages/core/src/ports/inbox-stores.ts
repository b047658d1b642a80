import type { InboxAccountStore } from './inbox-account-store.js';
import type { InboxAttachmentStore } from './inbox-attachment-store.js';
import type { InboxMessageStore } from './inbox-message-store.js';
import type { InboxNotificationStore } from './inbox-notification-store.js';
import type { InboxThreadStore } from './inbox-thread-store.js';
import type { MailEventStore } from './mail-event-store.js';

/** The inbox area's storage ports (one port per file beside this one). */
export type InboxStores = {
  inboxAccounts: InboxAccountStore;
  inboxThreads: InboxThreadStore;
  inboxMessages: InboxMessageStore;
  inboxAttachments: InboxAttachmentStore;
  mailEvents: MailEventStore;
  inboxNotifications: InboxNotificationStore;
};
