import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MountedServer } from './harness.js';

/** A host route every `Mount` serves after Postern, to prove requests outside
 *  Postern's mount points still reach the host. */
export const HOST_ROUTE = { path: '/host/ping', body: 'pong from host' } as const;

/** A host route every `Mount` guards with its adapter's `requireAuth` (the core's
 *  `ph.authorize` where there is no adapter), answering `{ userId }`. */
export const HOST_AUTH_ROUTE = { path: '/host/me' } as const;

/** A host route every `Mount` guards with `requireAuth` and then checks with
 *  `ph.auth.requireFreshAuth(principal, { password })` (password from its JSON body), answering
 *  `{ fresh: true }`; what that throws goes through the adapter's error handler
 *  (`posternErrorHandler()` of either adapter; `posternProblem` without one). */
export const HOST_FRESH_ROUTE = { path: '/host/fresh' } as const;

/** Starts a Node HTTP server for `listener` on 127.0.0.1, on a free port. */
export async function listen(listener: RequestListener | Server): Promise<MountedServer> {
  const server = typeof listener === 'function' ? createServer(listener) : listener;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
