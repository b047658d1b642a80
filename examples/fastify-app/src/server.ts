import { runMain } from '@postern/demo-page';
import { startApp } from './app.js';

await runMain(async () => {
  const app = await startApp(process.env);
  console.log(`Postern demo (Fastify) listening on ${app.url}: open ${app.origin}`);
  return app;
});
