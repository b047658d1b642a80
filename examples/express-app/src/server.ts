import { startApp } from './app.js';

const app = await startApp(process.env);
console.log(`Gatehouse demo (Express) listening on ${app.url}: open ${app.origin}`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
