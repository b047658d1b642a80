import { z } from 'zod';
import { emailField } from '../auth/schemas.js';

/** Request bodies of the inbox API (strict: unknown keys are refused). */

export const createAccountBody = z.strictObject({
  address: emailField,
  name: z.string().trim().min(1).max(200),
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

const view = {
  account: z.object({
    id: z.string(),
    address: z.string(),
    name: z.string(),
    role: z.enum(['owner', 'member']),
  }),
  attachment: z.object({ id: z.string(), filename: z.string(), contentType: z.string(), size: z.number() }),
};

export const accountSchema = view.account;
export const accountListSchema = z.object({ accounts: z.array(view.account) });
export const memberSchema = z.object({
  member: z.object({ accountId: z.string(), userId: z.string(), email: z.string(), role: z.string() }),
});
export const threadListSchema = z.object({
  threads: z.array(
    z.object({
      id: z.string(),
      accountId: z.string(),
      subject: z.string(),
      lastMessageAt: z.string(),
      messageCount: z.number(),
    }),
  ),
  nextCursor: z.string().nullable(),
});
export const messageSchema = z.object({
  id: z.string(),
  direction: z.enum(['inbound', 'outbound']),
  from: z.string(),
  to: z.array(z.string()),
  cc: z.array(z.string()),
  subject: z.string(),
  text: z.string(),
  html: z.string().nullable(),
  status: z.string(),
  openedAt: z.string().nullable(),
  clickCount: z.number(),
  providerMessageId: z.string(),
  messageId: z.string().nullable(),
  receivedAt: z.string(),
  attachments: z.array(view.attachment),
});
export const threadDetailSchema = z.object({
  thread: z.object({ id: z.string(), accountId: z.string(), subject: z.string() }),
  messages: z.array(messageSchema),
});
export const replySchema = z.object({ message: messageSchema });
