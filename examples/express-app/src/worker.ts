import { runMain, runWorker } from '@gatehouse/demo-page';

await runMain(() => runWorker(process.env));
