import type { AddressInfo } from 'node:net';
import { createPostern, type Postern, PosternError, posternProblem } from '@postern/core';
import { closeGracefully, type Env, readConfig, servePublic } from '@postern/demo-page';
import { posternRouter, problemClientError } from '@postern/express';
import express from 'express';

export interface RunningApp {
  /** Where the server listens. */
  url: string;
  /** Where a browser opens the page (`ORIGIN`; passkeys work only there). */
  origin: string;
  ph: Postern;
  close(): Promise<void>;
}

/** The Express example: Postern (mounted before any body parser), then the demo page. */
export async function startApp(env: Env = process.env): Promise<RunningApp> {
  const config = await readConfig(env);
  const ph = createPostern(config.postern);
  const app = express();
  app.disable('x-powered-by');
  app.use(posternRouter(ph));
  // The public keys at the origin too: `issuer` is this origin, and other services' JWKS
  // clients (get-jwks, for one) look for `<iss>/.well-known/jwks.json`.
  app.get('/.well-known/jwks.json', async (_req, res) => {
    res.json(await ph.jwks());
  });
  app.use(async (req, res, next) => {
    const file = await servePublic(req.method, req.url);
    if (!file) return next();
    res.writeHead(file.status, file.headers).end(req.method === 'HEAD' ? undefined : file.body);
  });
  // Everything else is a problem+json 404 too, like unknown routes under Postern's prefixes.
  app.use((_req, res) => {
    const out = posternProblem(new PosternError('not_found'));
    res.writeHead(out.status, out.headers).end(out.body);
  });

  const server = app.listen(config.port, config.host);
  // What Node's parser refuses before Express runs (huge headers) gets problem+json too.
  server.on('clientError', problemClientError);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve).once('error', reject);
  });
  if (config.workers > 0) ph.outbox.start();
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  config.logger.info(
    { event: 'listening', url, origin: config.origin, workers: config.workers },
    'listening',
  );

  return {
    url,
    origin: config.origin,
    ph,
    async close() {
      await closeGracefully(server);
      await ph.close();
      await config.close();
    },
  };
}
