import { z } from 'zod';
import { displayNameField, emailField } from '../auth/schemas.js';
import { MAX_CURSOR_CHARS } from './cursor.js';
import { MAX_PAGE_SIZE } from './options.js';

/** Request bodies of the inbox API (strict: unknown keys are refused). */

export const createAccountBody = z.strictObject({
  address: emailField,
  name: displayNameField(200),
});

export const addMemberBody = z.strictObject({
  email: emailField,
  role: z.enum(['owner', 'member']),
});

export const replyBody = z.strictObject({
  text: z.string().min(1).max(100_000),
  html: z.string().max(100_000).optional(),
});

const delivery = z.enum(['queued', 'sent', 'delayed', 'delivered', 'bounced', 'complained', 'failed']);
const idList = z.union([z.string().max(20_000), z.array(z.string().max(998)).max(100)]);
const addressList = z.union([z.string().max(20_000), z.array(z.string().max(500)).max(100)]);

export const recordOutboundInput = z.strictObject({
  accountId: z.string().min(1).max(200),
  threadId: z.string().min(1).max(200).optional(),
  providerMessageId: z.string().trim().min(1).max(256),
  messageId: z.string().max(998).nullable().optional(),
  inReplyTo: idList.optional(),
  references: idList.optional(),
  from: z.string().max(500).optional(),
  to: addressList,
  cc: addressList.optional(),
  subject: z.string().max(998),
  text: z.string().max(20_000_000).optional(),
  html: z.string().max(20_000_000).nullable().optional(),
  sentAt: z.date().optional(),
  status: delivery.optional(),
});

/** Answer shapes of the inbox API with every field sent: the OpenAPI document is generated
 *  from these, and the view types (views.ts) are inferred from them, so the two cannot drift. */
/** An ISO 8601 UTC instant; typed as the format alone (zod's own pattern would fill the document). */
const instant = z.string().meta({ format: 'date-time' });
const role = z.enum(['owner', 'member']);

export const accountSchema = z.object({
  id: z.string(),
  address: z.string(),
  name: z.string(),
  /** The caller's role. */
  role,
  createdAt: instant,
});
export const accountListSchema = z.object({ accounts: z.array(accountSchema) });
const memberView = z.object({
  accountId: z.string(),
  userId: z.string(),
  email: z.string(),
  role,
  /** Added by email to a user whose address is not proven yet: no access until it is. */
  pending: z.boolean(),
});
export const memberSchema = z.object({ member: memberView });
export const memberListSchema = z.object({ members: z.array(memberView) });
export const threadSummarySchema = z.object({
  id: z.string(),
  accountId: z.string(),
  subject: z.string(),
  lastMessageAt: instant,
  messageCount: z.number(),
});
export const threadListSchema = z.object({
  threads: z.array(threadSummarySchema),
  nextCursor: z.string().nullable(),
});
export const attachmentSchema = z.object({
  id: z.string(),
  filename: z.string(),
  contentType: z.string(),
  size: z.number(),
  contentId: z.string().nullable(),
  inline: z.boolean(),
});
export const messageSchema = z.object({
  id: z.string(),
  threadId: z.string(),
  direction: z.enum(['inbound', 'outbound']),
  from: z.string(),
  to: z.array(z.string()),
  cc: z.array(z.string()),
  subject: z.string(),
  text: z.string(),
  html: z.string().nullable(),
  status: z.enum(['received', ...delivery.options]),
  openedAt: instant.nullable(),
  openCount: z.number(),
  clickedAt: instant.nullable(),
  clickCount: z.number(),
  providerMessageId: z.string(),
  messageId: z.string().nullable(),
  inReplyTo: z.array(z.string()),
  references: z.array(z.string()),
  receivedAt: instant,
  attachments: z.array(attachmentSchema),
});
export const threadDetailSchema = z.object({
  thread: threadSummarySchema,
  messages: z.array(messageSchema),
});
export const replySchema = z.object({ message: messageSchema });

/** The thread list's query, for the OpenAPI document (the route reads it itself). */
export const threadListQuery = z.object({
  cursor: z.string().max(MAX_CURSOR_CHARS).optional().describe('`nextCursor` of the previous page'),
  limit: z
    .int()
    .min(1)
    .max(MAX_PAGE_SIZE)
    .optional()
    .describe('Threads per page (default `inbox.pageSize`, 50)'),
});
