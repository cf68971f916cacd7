import { describe, expect, it } from 'vitest';
import { setBounded, singleFlight } from './collections.js';

describe('setBounded', () => {
  it('keeps at most max entries, dropping the oldest; setting a key again makes it the newest', () => {
    const map = new Map<string, number>();
    setBounded(map, 'a', 1, 2);
    setBounded(map, 'b', 2, 2);
    setBounded(map, 'a', 3, 2);
    setBounded(map, 'c', 4, 2);
    expect([...map]).toEqual([['a', 3], ['c', 4]]);
  });
});

describe('singleFlight', () => {
  it('shares a running call per key, failure included, and runs again once it has settled', async () => {
    const shared = singleFlight<string, number>();
    let runs = 0;
    const slow = (value: number) => () => {
      runs++;
      return new Promise<number>((resolve) => setTimeout(() => resolve(value), 10));
    };
    const [a, b, other] = await Promise.all([shared('k', slow(1)), shared('k', slow(2)), shared('j', slow(3))]);
    expect([a, b, other, runs]).toEqual([1, 1, 3, 2]);
    const failing = () => Promise.reject(new Error('down'));
    await expect(Promise.all([shared('k', failing), shared('k', slow(4))])).rejects.toThrow('down');
    expect(await shared('k', slow(5))).toBe(5);
  });
});
