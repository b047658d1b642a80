import { type NeutralResponse, type Postern, type Principal, posternProblem } from '@postern/core';
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';

/** A `clientError` listener for the host's Node HTTP server: requests Node's parser refuses
 *  before any framework sees them (headers over `maxHeaderSize`, a malformed chunked body, a
 *  request timeout) are answered with the same problem+json as every other error, then the
 *  connection closes. `server.on('clientError', problemClientError)` on the server `app.listen()` returns. */
export { problemClientError } from '@postern/core/internal';

/** The part of a Postern instance the router needs. */
export type PosternHandler = Pick<Postern, 'handle' | 'owns'>;

export const BODY_CONSUMED_MESSAGE =
  'Postern: the request body was already read by another middleware (e.g. express.json()). ' +
  'Postern reads the raw body itself (body limits, webhook signatures over the exact bytes). ' +
  'Mount it before any body parser: app.use(posternRouter(ph)); app.use(express.json());';

function send(res: Response, out: NeutralResponse): void {
  res.writeHead(out.status, out.headers);
  if (out.body === null) res.end();
  else res.end(out.body);
}

/** Express 5 middleware serving every Postern route. Requests outside Postern's mount
 *  points fall through to the host (`next()`). Mount it before any body parser; under a
 *  sub-path (`app.use('/api', posternRouter(ph))`) paths are taken relative to it. */
export function posternRouter(ph: PosternHandler): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    // req.url is relative to the mount point, query included.
    if (req.readableDidRead && ph.owns(req.path)) {
      next(new Error(BODY_CONSUMED_MESSAGE));
      return;
    }
    const out = await ph.handle({
      method: req.method,
      path: req.url,
      headers: req.headers,
      body: req,
      ip: req.socket.remoteAddress,
      base: req.baseUrl,
    });
    if (out === null) next();
    else send(res, out);
  };
}

/** Middleware for the host's own routes: verifies the request's Bearer access token as
 *  Postern's routes do (ended sessions are refused at once, failures logged alike) and puts
 *  the principal on `res.locals.principal` (typed: `principalOf(res)`); otherwise answers the
 *  same 401 `invalid_token` problem+json.
 *  `app.get('/orders', requireAuth(ph), (req, res) => res.json(ordersOf(principalOf(res).userId)))` */
export function requireAuth(ph: Pick<Postern, 'authorize'>): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    const r = await ph.authorize({
      headers: req.headers,
      ip: req.socket.remoteAddress,
      path: req.originalUrl,
    });
    if (r.principal) {
      res.locals.principal = r.principal;
      next();
    } else if (res.headersSent) next(new Error('Postern requireAuth: the response was already sent'));
    else send(res, r.response);
  };
}

/** Error middleware, mounted after the host's routes: what a `ph.*` call threw in one of them
 *  (`ph.auth.requireFreshAuth`'s 403 `reauth_required`, a 429 with `Retry-After`, a store that
 *  is away) is answered as Postern's own routes answer, problem+json; any other error goes
 *  on to the host's next error handler. `app.use(posternErrorHandler())` */
export function posternErrorHandler(): ErrorRequestHandler {
  return (err, _req, res, next) => {
    const out = res.headersSent ? null : posternProblem(err);
    if (out) send(res, out);
    else next(err);
  };
}

/** The principal `requireAuth` verified for this request (throws on a route it does not guard). */
export function principalOf(res: Response): Principal {
  const p = res.locals.principal as Principal | undefined;
  if (!p) throw new Error('Postern principalOf: this route is not guarded by requireAuth(ph)');
  return p;
}
