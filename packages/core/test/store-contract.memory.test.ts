import { memoryStores } from '@gatehouse/core/memory';
import { describeStoreContract, TestClock } from '@gatehouse/testkit';

describeStoreContract('memory', async () => {
  const clock = new TestClock();
  return { stores: memoryStores({ clock }), clock };
});
