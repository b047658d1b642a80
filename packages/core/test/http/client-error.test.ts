import { createServer, type Server } from 'node:http';
import { rawExchange } from '@postern/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { problemClientError } from '../../src/http/client-error.js';

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

async function listen(): Promise<{ url: string; server: Server }> {
  // Answers once the body is read, so a broken body is the parser's to refuse.
  server = createServer((req, res) => req.resume().on('end', () => res.end('ok')));
  server.on('clientError', problemClientError);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server };
}

async function connectionsOf(s: Server): Promise<number> {
  return new Promise((resolve, reject) => s.getConnections((err, n) => (err ? reject(err) : resolve(n))));
}

describe('problemClientError', () => {
  it('answers a malformed request with problem+json and closes the connection, even if the client keeps its side open', async () => {
    const { url, server: s } = await listen();
    const answer = await rawExchange(
      url,
      'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n',
    );
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({
      code: 'validation_failed',
      errors: [{ path: '/', message: expect.any(String) }],
    });
    const deadline = Date.now() + 2000;
    while ((await connectionsOf(s)) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(await connectionsOf(s)).toBe(0);
  });

  it('answers oversized headers with 431 and oversized chunk extensions with 413', async () => {
    const { url } = await listen();
    const headers = await rawExchange(
      url,
      `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expect(headers.status).toBe(431);
    expect(JSON.parse(headers.body)).toMatchObject({ status: 431, code: 'headers_too_large' });
    const extensions = await rawExchange(
      url,
      `POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;${'a'.repeat(20_000)}\r\na\r\n0\r\n\r\n`,
    );
    expect(extensions.status).toBe(413);
    expect(JSON.parse(extensions.body)).toMatchObject({ status: 413, code: 'payload_too_large' });
  });
});
