import type { z } from 'zod';
import type { InboxAccount, InboxRole } from '../ports/inbox-account-store.js';
import type { InboxAttachment } from '../ports/inbox-attachment-store.js';
import type { InboxMessage } from '../ports/inbox-message-store.js';
import type { InboxThread } from '../ports/inbox-thread-store.js';
import type {
  accountSchema,
  attachmentSchema,
  memberSchema,
  messageSchema,
  threadDetailSchema,
  threadSummarySchema,
} from './schemas.js';

/** The answer shapes of the inbox API (the library API returns the same), inferred from the
 *  schemas the OpenAPI document is generated from. */
export type AccountView = z.infer<typeof accountSchema>;
export type ThreadSummary = z.infer<typeof threadSummarySchema>;
export type AttachmentView = z.infer<typeof attachmentSchema>;
export type MessageView = z.infer<typeof messageSchema>;
export type ThreadDetail = z.infer<typeof threadDetailSchema>;
export type MemberView = z.infer<typeof memberSchema>['member'];

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
