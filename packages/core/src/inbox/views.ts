import type { InboxAccount, InboxRole } from '../ports/inbox-account-store.js';
import type { InboxAttachment } from '../ports/inbox-attachment-store.js';
import type { InboxMessage, MessageDirection, MessageStatus } from '../ports/inbox-message-store.js';
import type { InboxThread } from '../ports/inbox-thread-store.js';

/** The answer shapes of CONTRACT.md 4.5 (the library API returns the same). */

export interface AccountView {
  id: string;
  address: string;
  name: string;
  /** The caller's role. */
  role: InboxRole;
  createdAt: string;
}

export interface ThreadSummary {
  id: string;
  accountId: string;
  subject: string;
  lastMessageAt: string;
  messageCount: number;
}

export interface AttachmentView {
  id: string;
  filename: string;
  contentType: string;
  size: number;
  contentId: string | null;
  inline: boolean;
}

export interface MessageView {
  id: string;
  threadId: string;
  direction: MessageDirection;
  from: string;
  to: string[];
  cc: string[];
  subject: string;
  text: string;
  html: string | null;
  status: MessageStatus;
  openedAt: string | null;
  openCount: number;
  clickedAt: string | null;
  clickCount: number;
  providerMessageId: string;
  messageId: string | null;
  inReplyTo: string[];
  references: string[];
  receivedAt: string;
  attachments: AttachmentView[];
}

export interface ThreadDetail {
  thread: { id: string; accountId: string; subject: string; lastMessageAt: string; messageCount: number };
  messages: MessageView[];
}

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

export const accountView = (a: InboxAccount, role: InboxRole): AccountView => ({
  id: a.id,
  address: a.address,
  name: a.name,
  role,
  createdAt: a.createdAt.toISOString(),
});

export const threadSummary = (t: InboxThread): ThreadSummary => ({
  id: t.id,
  accountId: t.accountId,
  subject: t.subject,
  lastMessageAt: t.lastMessageAt.toISOString(),
  messageCount: t.messageCount,
});

export const attachmentView = (a: InboxAttachment): AttachmentView => ({
  id: a.id,
  filename: a.filename,
  contentType: a.contentType,
  size: a.size,
  contentId: a.contentId,
  inline: a.inline,
});

export const messageView = (m: InboxMessage, attachments: InboxAttachment[]): MessageView => ({
  id: m.id,
  threadId: m.threadId,
  direction: m.direction,
  from: m.from,
  to: m.to,
  cc: m.cc,
  subject: m.subject,
  text: m.text,
  html: m.html,
  status: m.status,
  openedAt: iso(m.openedAt),
  openCount: m.openCount,
  clickedAt: iso(m.clickedAt),
  clickCount: m.clickCount,
  providerMessageId: m.providerMessageId,
  messageId: m.messageId,
  inReplyTo: m.inReplyTo,
  references: m.references,
  receivedAt: m.createdAt.toISOString(),
  attachments: attachments.filter((a) => a.messageId === m.id).map(attachmentView),
});
