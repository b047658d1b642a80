import { isPosternError, isStoreError, type PosternError, toProblem } from '../errors.js';
import type { NeutralResponse, Reply } from './types.js';

/** Headers on every answer: nothing here is cacheable or sniffable. A literal per answer
 *  (no spread): this runs on every request. */
function baseHeaders(contentType?: string): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  };
  if (contentType !== undefined) headers['content-type'] = contentType;
  return headers;
}

const JSON_TYPE = 'application/json; charset=utf-8';

export function replyToResponse(reply: Reply): NeutralResponse {
  const { body } = reply;
  const isJson = body !== undefined && body !== null && !(body instanceof Uint8Array);
  const headers = baseHeaders(isJson ? JSON_TYPE : undefined);
  if (reply.headers) for (const k in reply.headers) headers[k] = reply.headers[k]!;
  if (!isJson) return { status: reply.status, headers, body: (body as Uint8Array | undefined) ?? null };
  return { status: reply.status, headers, body: JSON.stringify(body) };
}

export function errorToResponse(e: unknown): NeutralResponse {
  const { problem, retryAfter } = toProblem(e);
  const headers = baseHeaders('application/problem+json; charset=utf-8');
  if (retryAfter !== undefined) headers['retry-after'] = String(Math.max(1, Math.ceil(retryAfter)));
  // The client may still be sending the oversized body: end the connection after answering.
  if (problem.status === 413) headers.connection = 'close';
  return { status: problem.status, headers, body: JSON.stringify(problem) };
}

/** The RFC 9457 answer (status, headers, problem+json body) for what a `ph.*` call threw in a
 *  host's own route (a `PosternError`, or a store that is away: 503 with `Retry-After`), or for
 *  a `PosternError` a host makes itself (`posternProblem(new PosternError('not_found'))`);
 *  `null` for anything else, which stays the host's to answer. What the adapters' error
 *  handlers send. */
export function posternProblem(e: PosternError): NeutralResponse;
export function posternProblem(e: unknown): NeutralResponse | null;
export function posternProblem(e: unknown): NeutralResponse | null {
  return isPosternError(e) || isStoreError(e) ? errorToResponse(e) : null;
}
