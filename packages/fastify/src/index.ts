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
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', (_req, payload, done) => done(null, payload));

  const toNeutral = (request: FastifyRequest, body: NeutralRequest['body']): NeutralRequest => ({
    method: request.method,
    path: request.url.slice(prefix.length),
    headers: request.headers,
    body,
    ip: request.socket.remoteAddress,
  });

  async function answer(reply: FastifyReply, req: NeutralRequest) {
    const out = await gh.handle(req);
    // Routes are registered under the prefixes only, so a null means a path the core does not own.
    if (out === null) return reply.callNotFound();
    return reply
      .code(out.status)
      .headers(out.headers)
      .send(out.body ?? undefined);
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
