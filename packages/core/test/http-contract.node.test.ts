import type { ServerResponse } from 'node:http';
import { buffer } from 'node:stream/consumers';
import { type NeutralResponse, posternProblem } from '@postern/core';
import {
  describeHttpContract,
  HOST_AUTH_ROUTE,
  HOST_FRESH_ROUTE,
  HOST_ROUTE,
  listen,
} from '@postern/testkit';

const send = (res: ServerResponse, out: NeutralResponse) =>
  res.writeHead(out.status, out.headers).end(out.body ?? undefined);

// The contract suite on a bare node:http server: the smallest possible adapter, so the core's
// HTTP behaviour is checked without any framework in between.
describeHttpContract('node:http', (ph) =>
  listen(async (req, res) => {
    try {
      const out = await ph.handle({
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        headers: req.headers,
        body: req,
        ip: req.socket.remoteAddress ?? '',
      });
      if (out) {
        send(res, out);
      } else if (req.url === HOST_ROUTE.path) {
        res.writeHead(200, { 'content-type': 'text/plain' }).end(HOST_ROUTE.body);
      } else if (req.url === HOST_AUTH_ROUTE.path) {
        const r = await ph.authorize({ headers: req.headers, ip: req.socket.remoteAddress, path: req.url });
        if (r.response) send(res, r.response);
        else
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ userId: r.principal.userId }));
      } else if (req.url === HOST_FRESH_ROUTE.path) {
        const r = await ph.authorize({ headers: req.headers, ip: req.socket.remoteAddress, path: req.url });
        if (r.response) return send(res, r.response);
        const { password } = JSON.parse(String(await buffer(req)));
        await ph.auth.requireFreshAuth(r.principal, { password });
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ fresh: true }));
      } else {
        res.writeHead(404).end();
      }
    } catch (e) {
      const out = posternProblem(e);
      if (out) send(res, out);
      else res.writeHead(500).end();
    }
  }),
);
