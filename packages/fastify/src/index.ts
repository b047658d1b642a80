import type { Gatehouse, NeutralRequest } from '@gatehouse/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export interface GatehousePluginOptions {
  gatehouse: Pick<Gatehouse, 'handle' | 'prefixes'>;
}

/** Fastify 5 plugin serving every Gatehouse route under `gatehouse.prefixes` (inside the
 *  register `prefix`, if any). Encapsulated on purpose (no fastify-plugin): its raw-body
 *  content-type parser stays inside this plugin and never changes the host's parsing. */
export async function gatehousePlugin(fastify: FastifyInstance, opts: GatehousePluginOptions): Promise<void> {
  const gh = opts.gatehouse;
  const prefix = fastify.prefix;

  // The core reads the body itself, under each route's limit: hand it the stream untouched.
  // JSON is named as well as caught by '*': Fastify caches the parser lookup of named types
  // only, and would otherwise parse the Content-Type again for every request.
  const untouched = (_req: FastifyRequest, payload: unknown, done: (err: null, body: unknown) => void) =>
    done(null, payload);
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('application/json', untouched);
  fastify.addContentTypeParser('*', untouched);

  const toNeutral = (request: FastifyRequest, body: NeutralRequest['body']): NeutralRequest => ({
    method: request.method,
    path: request.url.slice(prefix.length),
    headers: request.headers,
    body,
    ip: request.socket.remoteAddress,
  });

  /** Callback style, not `async`: Fastify waits for `reply.send`, and each request is spared
   *  a handler promise and the thenable `reply` it would resolve to. `handle` never rejects
   *  (errors become problems); should it, Fastify answers its 500. */
  function answer(reply: FastifyReply, req: NeutralRequest): void {
    gh.handle(req).then(
      (out) => {
        // Routes are registered under the prefixes only, so a null means a path the core does not own.
        if (out === null) reply.callNotFound();
        else
          reply
            .code(out.status)
            .headers(out.headers)
            .send(out.body ?? undefined);
      },
      (err: unknown) => reply.send(err),
    );
  }

  // No parser ran when there was no body: the untouched request stream is the (empty) body.
  const handler = (request: FastifyRequest, reply: FastifyReply) =>
    answer(reply, toNeutral(request, (request.body as NeutralRequest['body']) ?? request.raw));

  for (const p of gh.prefixes) {
    fastify.all(p, handler);
    fastify.all(`${p === '/' ? '' : p}/*`, handler);
  }

  // Fastify refuses a malformed Content-Type before any parser runs, with its own error
  // body. The stream is still unread: let the core answer, as it does behind Express.
  fastify.setErrorHandler((error: { code?: string }, request, reply) => {
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
      return answer(reply, toNeutral(request, request.raw));
    throw error;
  });
}
