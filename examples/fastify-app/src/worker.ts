import { runMain, runWorker } from '@postern/demo-page';

await runMain(() => runWorker(process.env));
