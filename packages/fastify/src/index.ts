import {
  type NeutralRequest,
  type NeutralResponse,
  type Postern,
  type Principal,
  posternProblem,
} from '@postern/core';
import type {
  FastifyError,
  FastifyInstance,
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
} from 'fastify';
import { fastifyPlugin } from 'fastify-plugin';

/** A `clientError` listener for the host's Node HTTP server: requests Node's parser refuses
 *  before any framework sees them (headers over `maxHeaderSize`, a malformed chunked body, a
 *  request timeout) are answered with the same problem+json as every other error, then the
 *  connection closes. `Fastify({ clientErrorHandler: problemClientError })`. */
export { problemClientError } from '@postern/core/internal';

type Handles = Pick<Postern, 'handle'>;

export interface PosternPluginOptions {
  postern: Pick<Postern, 'handle' | 'prefixes'>;
}

const toNeutral = (
  request: FastifyRequest,
  prefix: string,
  body: NeutralRequest['body'],
): NeutralRequest => ({
  method: request.method,
  path: request.url.slice(prefix.length),
  headers: request.headers,
  body,
  ip: request.socket.remoteAddress,
  base: prefix,
});

const send = (reply: FastifyReply, out: NeutralResponse) =>
  reply
    .code(out.status)
    .headers(out.headers)
    .send(out.body ?? undefined);

/** Routes are registered under the prefixes only, so a path the core does not own goes to
 *  Fastify's not-found handling. */
const notFound = (reply: FastifyReply) => reply.callNotFound();

/** Callback style, not `async`: Fastify waits for `reply.send`, and each request is spared a
 *  handler promise and the thenable `reply` it would resolve to. `handle` never rejects (errors
 *  become problems); should it, Fastify answers its 500. `outside` takes a path the core does
 *  not own (a shared function by default: no closure per request). */
function answer(
  ph: Handles,
  reply: FastifyReply,
  req: NeutralRequest,
  outside: (reply: FastifyReply) => void = notFound,
): void {
  ph.handle(req).then(
    (out) => {
      if (out === null) outside(reply);
      else send(reply, out);
    },
    (err: unknown) => reply.send(err),
  );
}

async function servePostern(fastify: FastifyInstance, opts: PosternPluginOptions): Promise<void> {
  const ph = opts.postern;
  const prefix = fastify.prefix;

  // The core reads the body itself, under each route's limit: hand it the stream untouched.
  // JSON is named as well as caught by '*': Fastify caches the parser lookup of named types
  // only, and would otherwise parse the Content-Type again for every request.
  const untouched = (_req: FastifyRequest, payload: unknown, done: (err: null, body: unknown) => void) =>
    done(null, payload);
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('application/json', untouched);
  fastify.addContentTypeParser('*', untouched);

  // No parser ran when there was no body: the untouched request stream is the (empty) body.
  const handler = (request: FastifyRequest, reply: FastifyReply) =>
    answer(ph, reply, toNeutral(request, prefix, (request.body as NeutralRequest['body']) ?? request.raw));

  for (const p of ph.prefixes) {
    fastify.all(p, handler);
    fastify.all(`${p === '/' ? '' : p}/*`, handler);
  }

  // Fastify refuses a malformed Content-Type before any parser runs, with its own error
  // body. The stream is still unread: let the core answer, as it does behind Express.
  fastify.setErrorHandler((error: { code?: string }, request, reply) => {
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
      return answer(ph, reply, toNeutral(request, prefix, request.raw));
    throw error;
  });
}

/** Fastify 5 plugin serving every Postern route under `postern.prefixes` (inside the
 *  register `prefix`, if any). Declared with fastify-plugin for its name (`hasPlugin`,
 *  other plugins' `dependencies`) and its Fastify version check, and kept encapsulated
 *  (`encapsulate: true`): its raw-body content-type parsers and its error handler stay inside
 *  this plugin and never change the host's parsing or error answers. */
export const posternPlugin: FastifyPluginAsync<PosternPluginOptions> = fastifyPlugin(servePostern, {
  name: '@postern/fastify',
  fastify: '5.x',
  encapsulate: true,
});

/** For `Fastify({ frameworkErrors })`: Fastify refuses some requests before routing (a
 *  malformed URL, an over-long route parameter), so no plugin sees them, and answers with its
 *  own JSON body. This hands them to Postern, which answers problem+json under its prefixes
 *  as it does behind Express; paths it does not own go to `fallback` (default: Fastify's 400
 *  error body). `prefix` is the plugin's register prefix, if any. */
export function posternFrameworkErrors(
  postern: Handles,
  options: {
    prefix?: string;
    fallback?: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void;
  } = {},
) {
  const { prefix = '', fallback = (error, _request, reply) => reply.code(400).send(error) } = options;
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const outside = () => fallback(error, request, reply);
    if (request.url.startsWith(prefix))
      answer(postern, reply, toNeutral(request, prefix, request.raw), outside);
    else outside();
  };
}

/** For the host's `app.setErrorHandler(...)`: what a `ph.*` call threw in one of its own routes
 *  (`ph.auth.requireFreshAuth`'s 403 `reauth_required`, a 429 with `Retry-After`, a store that
 *  is away) is answered as Postern's own routes answer, problem+json; anything else goes to
 *  `fallback` (default: Fastify's own error answer). */
export function posternErrorHandler(
  fallback: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => unknown = (
    error,
    _request,
    reply,
  ) => reply.send(error),
) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): unknown => {
    const out = posternProblem(error);
    return out ? send(reply, out) : fallback(error, request, reply);
  };
}

/** The principal `requireAuth` verified for this request (throws on a route it does not guard):
 *  `app.get('/orders', { preHandler: requireAuth(ph) }, (req) => ordersOf(principalOf(req).userId))` */
export function principalOf(request: FastifyRequest): Principal {
  const p = request.principal;
  if (!p) throw new Error('Postern principalOf: this route is not guarded by requireAuth(ph)');
  return p;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by `requireAuth` on the routes it guards. */
    principal?: Principal;
  }
}

/** A `preHandler` for the host's own routes: verifies the request's Bearer access token as
 *  Postern's routes do (ended sessions are refused at once, failures logged alike) and sets
 *  `request.principal`; otherwise answers the same 401 `invalid_token` problem+json.
 *  `app.get('/orders', { preHandler: requireAuth(ph) }, (req) => ordersOf(req.principal!.userId))` */
export function requireAuth(ph: Pick<Postern, 'authorize'>) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const r = await ph.authorize({
      headers: request.headers,
      ip: request.socket.remoteAddress,
      path: request.url,
    });
    if (r.principal) request.principal = r.principal;
    else await send(reply, r.response);
  };
}
