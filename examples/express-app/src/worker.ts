import { runWorker } from '@gatehouse/demo-page';

await runWorker(process.env);
