import type { Gatehouse, NeutralResponse } from '@gatehouse/core';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/** The part of a Gatehouse instance the router needs. */
export type GatehouseHandler = Pick<Gatehouse, 'handle' | 'owns'>;

export const BODY_CONSUMED_MESSAGE =
  'Gatehouse: the request body was already read by another middleware (e.g. express.json()). ' +
  'Gatehouse reads the raw body itself (body limits, webhook signatures over the exact bytes). ' +
  'Mount it before any body parser: app.use(gatehouseRouter(gh)); app.use(express.json());';

function send(res: Response, out: NeutralResponse): void {
  res.writeHead(out.status, out.headers);
  if (out.body === null) res.end();
  else res.end(out.body);
}

/** Express 5 middleware serving every Gatehouse route. Requests outside Gatehouse's mount
 *  points fall through to the host (`next()`). Mount it before any body parser; under a
 *  sub-path (`app.use('/api', gatehouseRouter(gh))`) paths are taken relative to it. */
export function gatehouseRouter(gh: GatehouseHandler): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    // req.url is relative to the mount point, query included.
    if (req.readableDidRead && gh.owns(req.path)) {
      next(new Error(BODY_CONSUMED_MESSAGE));
      return;
    }
    const out = await gh.handle({
      method: req.method,
      path: req.url,
      headers: req.headers,
      body: req,
      ip: req.socket.remoteAddress,
    });
    if (out === null) next();
    else send(res, out);
  };
}
