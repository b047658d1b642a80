import { createPostern, type Postern, PosternError, posternProblem } from '@postern/core';
import { closeGracefully, type Env, readConfig, servePublic } from '@postern/demo-page';
import { posternFrameworkErrors, posternPlugin, problemClientError } from '@postern/fastify';
import Fastify, { type FastifyReply } from 'fastify';

export interface RunningApp {
  /** Where the server listens. */
  url: string;
  /** Where a browser opens the page (`ORIGIN`; passkeys work only there). */
  origin: string;
  ph: Postern;
  close(): Promise<void>;
}

/** The Fastify example: the Postern plugin, then the demo page. */
export async function startApp(env: Env = process.env): Promise<RunningApp> {
  const config = await readConfig(env);
  const ph = createPostern(config.postern);
  // Requests Fastify refuses before routing (a malformed URL) get problem+json under Postern's
  // prefixes too, and so do those Node's parser refuses before Fastify (huge headers).
  const notFound = (reply: FastifyReply) => {
    const out = posternProblem(new PosternError('not_found'));
    return reply.code(out.status).headers(out.headers).send(out.body);
  };
  const app = Fastify({
    // A malformed URL outside the prefixes gets the same problem+json 404 as the Express app.
    frameworkErrors: posternFrameworkErrors(ph, { fallback: (_error, _request, reply) => notFound(reply) }),
    clientErrorHandler: problemClientError,
    // Fastify has none by default: a body that never ends would hold its request for good.
    // Node's own default (what the Express app gets), answered 408 problem+json.
    requestTimeout: 300_000,
  });
  await app.register(posternPlugin, { postern: ph });
  // The public keys at the origin too: `issuer` is this origin, and other services' JWKS
  // clients (get-jwks, for one) look for `<iss>/.well-known/jwks.json`.
  app.get('/.well-known/jwks.json', () => ph.jwks());
  // Everything else is a problem+json 404 too, like unknown routes under Postern's prefixes.
  app.setNotFoundHandler((_req, reply) => notFound(reply));
  app.get('/*', async (req, reply) => {
    const file = await servePublic(req.method, req.url);
    if (!file) return reply.callNotFound();
    return reply.code(file.status).headers(file.headers).send(file.body);
  });

  const address = await app.listen({ port: config.port, host: config.host });
  if (config.workers > 0) ph.outbox.start();
  const { port } = app.server.address() as { port: number };
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  config.logger.info(
    { event: 'listening', url, address, origin: config.origin, workers: config.workers },
    'listening',
  );

  return {
    url,
    origin: config.origin,
    ph,
    async close() {
      await closeGracefully(app.server, () => app.close());
      await ph.close();
      await config.close();
    },
  };
}
