import { describeExampleApp } from '../../demo-page/test/example-app.js';
import { startApp } from '../src/app.js';

describeExampleApp('Fastify example', startApp);
