import { PosternError } from '../errors.js';
import { routeOf } from '../http/route-table.js';
import type { RouteContext, RouteDef, RouteTable } from '../http/types.js';
import { metaOf } from '../util/security-log.js';
import type { AccessMeta } from './access.js';
import type { InboxApi } from './api.js';
import { MAX_PAGE_SIZE } from './options.js';
import {
  accountListSchema,
  accountSchema,
  addMemberBody,
  createAccountBody,
  memberListSchema,
  memberSchema,
  replyBody,
  replySchema,
  threadDetailSchema,
  threadListQuery,
  threadListSchema,
} from './schemas.js';

/** RFC 6266 `Content-Disposition: attachment` with an ASCII fallback and an RFC 8187 UTF-8 name. */
export function contentDisposition(filename: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are replaced
  const cut = filename.replace(/[\u0000-\u001f\u007f/\\]/g, '_').slice(0, 255);
  // Well-formed after the cut, which may split a pair: encodeURIComponent throws on half of one.
  const clean = cut.toWellFormed() || 'attachment';
  const ascii = clean.replace(/[^\x20-\x7e]|["%;]/g, '_');
  const encoded = encodeURIComponent(clean).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/** The request and session behind a route call, for the log line of a refusal. */
const asker = (rc: RouteContext<unknown>): AccessMeta => ({ ...metaOf(rc), sid: rc.principal.sid });

const access = {
  403: { description: 'not an owner/member of that inbox account' },
  404: { description: 'unknown id' },
};
/** What every route of an account or thread can answer beyond those of every Bearer route. */
const errors = ['forbidden', 'not_found'] as const;

/** A route of this table: its `operationId` names a function of `ph.inbox`, and its
 *  handler's body is typed by its `body` schema. */
const route = routeOf<InboxApi>();

/** The inbox API (area `inbox`, Bearer, members only; docs/inbox.md), run by `ph.inbox`.
 *  Routes with a body check access first: a non-member gets 403 whatever they sent. */
export function createInboxRoutes(api: InboxApi): RouteTable {
  const limitOf = (v: string | null) => {
    if (v === null) return undefined;
    const n = /^\d{1,3}$/.test(v) ? Number(v) : Number.NaN;
    if (!(n >= 1 && n <= MAX_PAGE_SIZE)) {
      throw new PosternError('validation_failed', {
        errors: [{ path: 'limit', message: `from 1 to ${MAX_PAGE_SIZE}` }],
      });
    }
    return n;
  };
  const routes: RouteDef[] = [
    route({
      method: 'POST',
      path: '/accounts',
      operationId: 'createAccount',
      auth: 'bearer',
      body: createAccountBody,
      validatesBody: true, // createAccount validates (it is ph.inbox.createAccount too)
      summary: 'Create an inbox account; the caller becomes its owner',
      responses: {
        201: { description: 'the account', schema: accountSchema },
        429: { description: 'too many accounts created by the caller (inbox-account:user)' },
      },
      errors: ['forbidden', 'rate_limited'],
      async handler({ principal, body }) {
        return { status: 201, body: await api.createAccount(principal.userId, body) };
      },
    }),
    route({
      method: 'GET',
      path: '/accounts',
      operationId: 'listAccounts',
      auth: 'bearer',
      summary: 'Inbox accounts the caller belongs to',
      responses: { 200: { description: 'accounts', schema: accountListSchema } },
      async handler({ principal }) {
        return { status: 200, body: { accounts: await api.listAccounts(principal.userId) } };
      },
    }),
    route({
      method: 'POST',
      path: '/accounts/:id/members',
      operationId: 'addMember',
      auth: 'bearer',
      body: addMemberBody,
      validatesBody: true, // addMember checks ownership, then validates
      summary: 'Add a registered user to an inbox account, or change their role (owners only)',
      responses: {
        201: { description: 'member added', schema: memberSchema },
        200: { description: 'role changed', schema: memberSchema },
        ...access,
        404: { description: 'unknown account id, or no user with this email' },
        429: { description: 'too many emails without a user (member:user, member:ip)' },
      },
      errors: [...errors, 'rate_limited'],
      async handler(rc) {
        const { principal, params, body } = rc;
        const { member, created } = await api.addMember(principal.userId, params.id!, body, asker(rc));
        return { status: created ? 201 : 200, body: { member } };
      },
    }),
    route({
      method: 'GET',
      path: '/accounts/:id/members',
      operationId: 'listMembers',
      auth: 'bearer',
      summary:
        'Members of an inbox account, with those waiting for a proven address as pending (owners only)',
      responses: { 200: { description: 'the members', schema: memberListSchema }, ...access },
      errors,
      async handler(rc) {
        return {
          status: 200,
          body: { members: await api.listMembers(rc.principal.userId, rc.params.id!, asker(rc)) },
        };
      },
    }),
    route({
      method: 'GET',
      path: '/accounts/:id/threads',
      operationId: 'listThreads',
      auth: 'bearer',
      summary: 'Threads of an inbox account, newest first (`?cursor=` from `nextCursor`, `?limit=`)',
      query: threadListQuery,
      responses: { 200: { description: 'one page of threads', schema: threadListSchema }, ...access },
      errors: [...errors, 'validation_failed'],
      async handler(rc) {
        const { principal, params, query } = rc;
        const limit = limitOf(query.get('limit'));
        return {
          status: 200,
          body: await api.listThreads(
            principal.userId,
            params.id!,
            { cursor: query.get('cursor'), ...(limit === undefined ? {} : { limit }) },
            asker(rc),
          ),
        };
      },
    }),
    route({
      method: 'GET',
      path: '/threads/:id',
      operationId: 'getThread',
      auth: 'bearer',
      summary: 'A thread with its messages (oldest first), statuses and attachment metadata',
      responses: { 200: { description: 'the thread', schema: threadDetailSchema }, ...access },
      errors,
      async handler(rc) {
        return { status: 200, body: await api.getThread(rc.principal.userId, rc.params.id!, asker(rc)) };
      },
    }),
    route({
      method: 'GET',
      path: '/attachments/:id',
      operationId: 'getAttachment',
      auth: 'bearer',
      summary: 'Download an attachment (never rendered at the host origin)',
      responses: { 200: { description: 'the bytes, as a download', binary: true }, ...access },
      errors,
      async handler(rc) {
        const a = await api.getAttachment(rc.principal.userId, rc.params.id!, asker(rc));
        return {
          status: 200,
          body: a.bytes,
          headers: {
            'content-type': a.contentType,
            'content-disposition': contentDisposition(a.filename),
            'content-security-policy': "sandbox; default-src 'none'",
            'x-content-type-options': 'nosniff',
            'cross-origin-resource-policy': 'same-origin',
          },
        };
      },
    }),
    route({
      method: 'POST',
      path: '/threads/:id/reply',
      operationId: 'reply',
      auth: 'bearer',
      body: replyBody,
      validatesBody: true, // reply checks membership, then validates
      summary: 'Reply on a thread through the mail provider',
      responses: {
        201: { description: 'the stored outbound message', schema: replySchema },
        ...access,
        429: { description: 'too many replies by the caller (reply:user)' },
        503: { description: 'the mail provider did not accept the reply' },
      },
      errors: [...errors, 'rate_limited'],
      async handler(rc) {
        const { principal, params, body } = rc;
        return {
          status: 201,
          body: { message: await api.reply(principal.userId, params.id!, body, asker(rc)) },
        };
      },
    }),
  ];
  return { area: 'inbox', library: 'inbox', routes };
}
