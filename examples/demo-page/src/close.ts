import type { Server } from 'node:http';

/** Stops taking connections and lets requests in flight finish (a reply may be half-way
 *  through a provider call), closing each keep-alive connection as soon as it is idle rather
 *  than after the keep-alive timeout; after `graceMs` whatever is left is cut. `close` is the
 *  framework's own close (Fastify's), else the server's. */
export async function closeGracefully(
  server: Server,
  close: () => Promise<unknown> = () => new Promise<void>((resolve) => server.close(() => resolve())),
  graceMs = 10_000,
): Promise<void> {
  const closed = close();
  const idle = setInterval(() => server.closeIdleConnections(), 50);
  const cut = setTimeout(() => server.closeAllConnections(), graceMs);
  server.closeIdleConnections();
  try {
    await closed;
  } finally {
    clearInterval(idle);
    clearTimeout(cut);
  }
}
