import { runMain } from '@gatehouse/demo-page';
import { startApp } from './app.js';

await runMain(async () => {
  const app = await startApp(process.env);
  console.log(`Gatehouse demo (Fastify) listening on ${app.url}: open ${app.origin}`);
  return app;
});
