import { problemResponse } from '@gatehouse/core';
import { describeHttpContract, HOST_AUTH_ROUTE, HOST_ROUTE, listen } from '@gatehouse/testkit';

// The contract suite on a bare node:http server: the smallest possible adapter, so the core's
// HTTP behaviour is checked without any framework in between.
describeHttpContract('node:http', (gh) =>
  listen(async (req, res) => {
    try {
      const out = await gh.handle({
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        headers: req.headers,
        body: req,
        ip: req.socket.remoteAddress ?? '',
      });
      if (out) {
        res.writeHead(out.status, out.headers).end(out.body ?? undefined);
      } else if (req.url === HOST_ROUTE.path) {
        res.writeHead(200, { 'content-type': 'text/plain' }).end(HOST_ROUTE.body);
      } else if (req.url === HOST_AUTH_ROUTE.path) {
        const principal = await gh.auth.verifyAuthorization(req.headers.authorization).catch(problemResponse);
        if ('userId' in principal)
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ userId: principal.userId }));
        else res.writeHead(principal.status, principal.headers).end(principal.body);
      } else {
        res.writeHead(404).end();
      }
    } catch {
      res.writeHead(500).end();
    }
  }),
);
