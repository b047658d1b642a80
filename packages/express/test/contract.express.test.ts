import { describeHttpContract } from '@gatehouse/testkit';
import { expressHost } from './host.js';

describeHttpContract('express', expressHost);
