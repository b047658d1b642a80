import { describeSessionDemo } from '../../demo-page/test/session-demo.js';
import { startApp } from '../src/app.js';

describeSessionDemo('Express example', startApp);
