interface Waiter<V> {
  resolve: (value: V | undefined) => void;
  reject: (error: unknown) => void;
}

/**
 * A call whose invocations within one turn of the event loop are carried out together by one
 * `many` (equal keys once): under load, one statement for every request that arrived in the same
 * poll; alone, no wait, since the batch goes out in the same iteration's check phase. A key
 * `many` does not answer resolves to undefined; its failure rejects the whole batch.
 */
export function tickBatched<K, V>(many: (keys: K[]) => Promise<Map<K, V>>): (key: K) => Promise<V | undefined> {
  let pending: Map<K, Waiter<V>[]> | undefined;
  const run = async (batch: Map<K, Waiter<V>[]>) => {
    try {
      const found = await many([...batch.keys()]);
      for (const [key, waiters] of batch) for (const waiter of waiters) waiter.resolve(found.get(key));
    } catch (error) {
      for (const waiters of batch.values()) for (const waiter of waiters) waiter.reject(error);
    }
  };
  return (key) =>
    new Promise((resolve, reject) => {
      if (!pending) {
        const batch = new Map<K, Waiter<V>[]>();
        pending = batch;
        setImmediate(() => {
          pending = undefined;
          void run(batch);
        });
      }
      const waiters = pending.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else pending.set(key, [{ resolve, reject }]);
    });
}
