/**
 * runBounded calls `work` for each item with at most `limit` calls in flight, and resolves once
 * every started call has settled. `shouldStop` (asked before each item is started) ends it early:
 * the items not started are returned, in order. A rejected call does not stop the others; the
 * first rejection is thrown once all started calls have settled, so nothing runs on behind it.
 *
 * Why bounded: one call at a time made a sync of N new bindings N round trips long;
 * all at once would open thousands of requests against the edge or the apiserver.
 */
export async function runBounded<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>, shouldStop: () => boolean = () => false): Promise<T[]> {
  let next = 0;
  let failure: { err: unknown } | undefined;
  const lane = async (): Promise<void> => {
    while (next < items.length && failure === undefined && !shouldStop()) {
      const item = items[next++] as T;
      try {
        await work(item);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
  if (failure !== undefined) throw failure.err;
  return items.slice(next);
}
