/** Items grouped by key, groups and items in their first-seen order (Map.groupBy arrives in Node 21). */
export function groupBy<T, K>(items: Iterable<T>, keyOf: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

/**
 * Calls of `run` shared by key: while one runs for a key, callers for that key get its promise
 * instead of starting another (a fetch that a flood of requests would otherwise repeat).
 */
export function singleFlight<K, V>(): (key: K, run: () => Promise<V>) => Promise<V> {
  const running = new Map<K, Promise<V>>();
  return (key, run) => {
    const inFlight = running.get(key);
    if (inFlight) return inFlight;
    const started = run().finally(() => running.delete(key));
    running.set(key, started);
    return started;
  };
}

/**
 * Sets `key` as the newest entry of a map kept to `max` entries: when full, the oldest entry (the
 * first in insertion order) goes. For caches whose keys callers can vary.
 */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  if (map.size >= max) map.delete(map.keys().next().value as K);
  map.set(key, value);
}
