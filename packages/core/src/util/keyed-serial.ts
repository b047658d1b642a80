/** Runs tasks that share a key one after the other (in this process); other keys run freely.
 *  A key's entry is dropped once its last task settles, so idle keys hold no memory. */
export function createKeyedSerial() {
  const tails = new Map<string, Promise<unknown>>();
  return function run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const before = tails.get(key) ?? Promise.resolve();
    const result = before.then(task, task);
    const tail = result.then(
      () => {},
      () => {},
    );
    tails.set(key, tail);
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    return result;
  };
}
