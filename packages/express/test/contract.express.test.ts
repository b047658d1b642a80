import { gatehouseRouter } from '@gatehouse/express';
import { describeHttpContract, HOST_ROUTE, listen } from '@gatehouse/testkit';
import express from 'express';

describeHttpContract('express', async (gh) => {
  const app = express();
  app.use(gatehouseRouter(gh));
  app.get(HOST_ROUTE.path, (_req, res) => {
    res.type('text/plain').send(HOST_ROUTE.body);
  });
  return listen(app);
});
