import { describeHttpContract } from '@postern/testkit';
import { expressHost } from './host.js';

describeHttpContract('express', expressHost);
