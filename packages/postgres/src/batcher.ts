/**
 * Group commit for one kind of write: calls made while earlier batches are in flight are
 * gathered and sent as one statement when a slot frees up. An idle batcher sends a lone call at
 * once, so it adds no latency; under load it turns N round trips (and N commits) into a few.
 */
export function createBatcher<I, O>(run: (items: I[]) => Promise<O[]>, opts: { slots: number; max: number }) {
  let queue: Array<{ item: I; resolve: (o: O) => void; reject: (e: unknown) => void }> = [];
  let inFlight = 0;

  const flush = () => {
    while (inFlight < opts.slots && queue.length > 0) {
      const batch = queue.slice(0, opts.max);
      queue = queue.slice(batch.length);
      inFlight += 1;
      run(batch.map((b) => b.item))
        .then(
          (out) => {
            for (let i = 0; i < batch.length; i++) batch[i]!.resolve(out[i]!);
          },
          (err) => {
            for (const b of batch) b.reject(err);
          },
        )
        .finally(() => {
          inFlight -= 1;
          flush();
        });
    }
  };

  return (item: I): Promise<O> =>
    new Promise<O>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      flush();
    });
}
