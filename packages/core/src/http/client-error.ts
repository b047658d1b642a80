import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { PosternError } from '../errors.js';
import { errorToResponse } from './respond.js';

/** How long the answer may take to flush before the socket is destroyed anyway. */
const FLUSH_MS = 5000;
const NOT_HTTP = 'The request is not valid HTTP/1.1';

/** The problem for what Node's HTTP parser refused, by its error code. */
function problemOf(code: string | undefined): PosternError {
  if (code === 'HPE_HEADER_OVERFLOW') return new PosternError('headers_too_large');
  if (code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') return new PosternError('payload_too_large');
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return new PosternError('request_timeout');
  return new PosternError('validation_failed', {
    detail: NOT_HTTP,
    errors: [{ path: '/', message: NOT_HTTP }],
  });
}

/** A `clientError` listener for the host's Node HTTP server (`server.on('clientError', ...)`,
 *  or Fastify's `clientErrorHandler` option). Node's parser refuses some requests before any
 *  framework or adapter sees them (headers over `maxHeaderSize`, a malformed chunked body,
 *  a request timeout), and answers with a bare status line, Fastify with its own JSON. This
 *  answers them with the same problem+json as every other error, then closes the connection:
 *  the parser cannot resume on that stream. As Node does, nothing is written when the peer is
 *  gone or a response on that socket has already started. */
export function problemClientError(err: Error & { code?: string }, socket: Duplex): void {
  const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const out = errorToResponse(problemOf(err.code));
  const body = out.body ?? '';
  const head = [`HTTP/1.1 ${out.status} ${STATUS_CODES[out.status]}`];
  for (const [name, value] of Object.entries(out.headers))
    if (name !== 'connection') for (const v of [value].flat()) head.push(`${name}: ${v}`);
  head.push(`content-length: ${Buffer.byteLength(body)}`, 'connection: close');
  // Destroyed once written, as Node does, not only half-closed: server sockets allow half-open
  // connections, so a client that never closes its side (slowloris) would otherwise keep it,
  // and a request still being handled on it would never see its `close`.
  const timer = setTimeout(() => socket.destroy(), FLUSH_MS);
  timer.unref();
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`, () => {
    clearTimeout(timer);
    socket.destroy();
  });
}
