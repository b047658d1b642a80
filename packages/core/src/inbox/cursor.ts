import { PosternError } from '../errors.js';
import type { InboxThread, ThreadCursor } from '../ports/inbox-thread-store.js';

/** Opaque page cursor: the position of the last thread of a page. */
export function encodeCursor(t: InboxThread): string {
  return Buffer.from(`${t.lastMessageAt.getTime()}.${t.activity}.${t.id}`, 'utf8').toString('base64url');
}

/** Longest cursor taken (the document says so too); `encodeCursor`'s are under 100. */
export const MAX_CURSOR_CHARS = 400;

/** Throws 400 `validation_failed` for anything `encodeCursor` did not make. */
export function decodeCursor(cursor: string): ThreadCursor {
  const text = cursor.length <= MAX_CURSOR_CHARS ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const m = /^(\d{1,15})\.(\d{1,9})\.([\w-]{1,200})$/.exec(text);
  if (!m) {
    throw new PosternError('validation_failed', {
      errors: [{ path: 'cursor', message: 'invalid cursor' }],
    });
  }
  return { lastMessageAt: new Date(Number(m[1])), activity: Number(m[2]), id: m[3]! };
}
