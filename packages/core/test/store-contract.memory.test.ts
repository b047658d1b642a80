import { memoryStores } from '@postern/core/memory';
import { describeStoreContract, TestClock } from '@postern/testkit';

describeStoreContract('memory', async () => {
  const clock = new TestClock();
  return { stores: memoryStores({ clock }), clock };
});
