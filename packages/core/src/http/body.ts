import { isUtf8 } from 'node:buffer';
import { PosternError } from '../errors.js';
import { MAX_JSON_DEPTH, nestedTooDeep, nestsDeeperThan } from './json-depth.js';
import type { HeaderValue } from './types.js';

const EMPTY = new Uint8Array(0);
/** Bytes of an oversized body read and thrown away before answering 413. Clients such as
 *  fetch only see an early answer reliably once they finished sending; past this cap the
 *  connection is closed on them instead (memory stays flat either way: nothing is kept). */
const DRAIN_CAP = 64 * 1024 * 1024;

async function drainThenRefuse(it: AsyncIterator<Uint8Array | string>, seen: number): Promise<never> {
  try {
    for (let r = await it.next(); !r.done && seen <= DRAIN_CAP; r = await it.next()) seen += r.value.length;
  } catch {
    // The client went away: nothing left to answer.
  }
  throw new PosternError('payload_too_large');
}

/** Reads the raw body, enforcing `limit` while reading so an oversized body is never
 *  buffered whole. A declared Content-Length over the limit is refused before reading.
 *  Bytes already at hand come back as they are and a stream as a promise (no promise per
 *  request where none is needed); what is decided before reading throws at once. */
export function readBody(
  body: Uint8Array | AsyncIterable<Uint8Array> | null | undefined,
  headers: Record<string, HeaderValue>,
  limit: number,
): Uint8Array | Promise<Uint8Array> {
  const declared = Number(headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    if (body == null || body instanceof Uint8Array || declared > DRAIN_CAP)
      throw new PosternError('payload_too_large');
    return drainThenRefuse(body[Symbol.asyncIterator](), 0);
  }
  if (body == null) return EMPTY;
  if (body instanceof Uint8Array) {
    if (body.byteLength > limit) throw new PosternError('payload_too_large');
    return body;
  }
  // HTTP/1.1: a request with neither header has no body (RFC 9112 6.3). Skipping the stream
  // keeps GET and DELETE off the async-iteration path.
  if (
    declared === 0 ||
    (headers['content-length'] === undefined && headers['transfer-encoding'] === undefined)
  )
    return EMPTY;
  return isNodeStream(body) ? readNodeStream(body, limit) : readIterable(body, limit);
}

/** What a Node request stream (IncomingMessage, Fastify's `request.raw`) offers. */
interface NodeStream {
  on(event: string, fn: (arg?: unknown) => void): unknown;
  pause(): unknown;
  resume(): unknown;
  readableEnded?: boolean;
  destroyed?: boolean;
}

function isNodeStream(body: object): body is NodeStream {
  const s = body as Partial<NodeStream>;
  return typeof s.on === 'function' && typeof s.pause === 'function' && typeof s.resume === 'function';
}

const unreadable = () =>
  new PosternError('validation_failed', { detail: 'The request body could not be read' });

/** The hot path for Node streams: plain listeners, no async iterator per request. Over the
 *  limit, the rest is drained up to DRAIN_CAP before the 413 (see drainThenRefuse). */
function readNodeStream(stream: NodeStream, limit: number): Promise<Uint8Array> {
  if (stream.readableEnded) return Promise.resolve(EMPTY);
  // Aborted before we got here (a host's async middleware ran first): its close is long gone.
  if (stream.destroyed) return Promise.reject(unreadable());
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    let over = false;
    let settled = false;
    // The listeners stay once settled (the stream dies with its request): they are no-ops by
    // then, and the error listener keeps a late error (a host's own stream in between) from
    // becoming an uncaught exception.
    const settle = (err: PosternError | null) => {
      if (settled) return;
      settled = true;
      if (err === null) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
      else reject(err);
    };
    stream.on('data', (chunk) => {
      if (settled) return;
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Uint8Array);
      size += bytes.byteLength;
      if (!over && size <= limit) {
        chunks.push(bytes);
        return;
      }
      over = true;
      chunks.length = 0;
      if (size > DRAIN_CAP) {
        stream.pause();
        settle(new PosternError('payload_too_large'));
      }
    });
    stream.on('end', () => settle(over ? new PosternError('payload_too_large') : null));
    // An error or a close before `end`: the client went away mid-body. Every request closes
    // after its end, so nothing is built once settled (an Error costs a stack trace).
    const gone = () => {
      if (!settled) settle(over ? new PosternError('payload_too_large') : unreadable());
    };
    stream.on('error', gone);
    stream.on('close', gone);
    // A host may have paused it; a `data` listener alone does not restart a paused stream.
    stream.resume();
  });
}

async function readIterable(body: AsyncIterable<Uint8Array>, limit: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  // Iterated by hand: leaving a `for await` early would destroy the request stream, and with
  // it the socket, before the 413 is written. The rest is drained instead, and the 413 carries
  // `connection: close` (respond.ts) so the server drops the connection after it.
  const it = body[Symbol.asyncIterator]();
  try {
    for (let r = await it.next(); !r.done; r = await it.next()) {
      const bytes = typeof r.value === 'string' ? Buffer.from(r.value) : r.value;
      size += bytes.byteLength;
      if (size > limit) return drainThenRefuse(it, size);
      chunks.push(bytes);
    }
  } catch (e) {
    if (e instanceof PosternError) throw e;
    throw unreadable();
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
}

/** JSON text of a body and its value; 400 `invalid_json` unless the bytes are UTF-8 (RFC 8259
 *  8.1: other bytes would be read as U+FFFD, and two different passwords could hash the same)
 *  holding valid JSON. A BOM is kept, so it fails the parse. Every JSON body goes through here,
 *  so each is bounded in depth before `JSON.parse` (400 `validation_failed`). */
export function parseUtf8Json(raw: Uint8Array): { text: string; value: unknown } {
  if (!isUtf8(raw)) throw new PosternError('invalid_json');
  if (nestsDeeperThan(raw, MAX_JSON_DEPTH)) throw nestedTooDeep();
  const text = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8');
  try {
    return { text, value: JSON.parse(text) };
  } catch {
    throw new PosternError('invalid_json');
  }
}
