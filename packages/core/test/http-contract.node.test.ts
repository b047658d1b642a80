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
        const r = await gh.authorize({ headers: req.headers, ip: req.socket.remoteAddress, path: req.url });
        if (r.response)
          res.writeHead(r.response.status, r.response.headers).end(r.response.body ?? undefined);
        else
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ userId: r.principal.userId }));
      } else {
        res.writeHead(404).end();
      }
    } catch {
      res.writeHead(500).end();
    }
  }),
);
