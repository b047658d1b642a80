import { toProblem } from '../errors.js';
import type { NeutralResponse, Reply } from './types.js';

/** Headers on every answer: nothing here is cacheable or sniffable. */
const BASE_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
} as const;

export function replyToResponse(reply: Reply): NeutralResponse {
  const headers: Record<string, string> = { ...BASE_HEADERS, ...reply.headers };
  if (reply.body === undefined || reply.body === null) return { status: reply.status, headers, body: null };
  if (reply.body instanceof Uint8Array) return { status: reply.status, headers, body: reply.body };
  headers['content-type'] ??= 'application/json; charset=utf-8';
  return { status: reply.status, headers, body: JSON.stringify(reply.body) };
}

export function errorToResponse(e: unknown): NeutralResponse {
  const { problem, retryAfter } = toProblem(e);
  const headers: Record<string, string> = {
    ...BASE_HEADERS,
    'content-type': 'application/problem+json; charset=utf-8',
  };
  if (retryAfter !== undefined) headers['retry-after'] = String(Math.max(1, Math.ceil(retryAfter)));
  // The client may still be sending the oversized body: end the connection after answering.
  if (problem.status === 413) headers.connection = 'close';
  return { status: problem.status, headers, body: JSON.stringify(problem) };
}
