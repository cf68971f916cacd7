import { isIPv6 } from 'node:net';
import { ServiceError } from './errors.js';

export interface FailureLimiterOptions {
  /** Failures allowed per key within one window (default 20); the next attempt is refused until it ends. */
  limit?: number;
  /** Default one minute. */
  windowMs?: number;
  nowMs: () => number;
  /** What a refused caller is told was failing ("authentication attempts"). */
  what: string;
  /**
   * Keys remembered, past which the oldest go first, so a flood of new keys forgets no recent one;
   * keys still locked out stay (`forgetOne`).
   */
  maxKeys?: number;
}

/**
 * Counts failed attempts per key and refuses (429 RATE_LIMITED with Retry-After) once a key has
 * failed `limit` times in its window. `check` then `record` counts an attempt once it failed;
 * `reserve` counts it before it runs, for attempts that may run concurrently.
 */
export function createFailureLimiter({ limit = 20, windowMs = 60_000, nowMs, what, maxKeys = 50_000 }: FailureLimiterOptions) {
  const failures = new Map<string, { count: number; windowStartMs: number }>();
  const lockedOut = (entry: { count: number; windowStartMs: number }, now: number) => entry.count >= limit && now - entry.windowStartMs <= windowMs;

  /**
   * Forgets the oldest key not locked out; a locked one goes behind the others (in Map order). A
   * lockout is never forgotten before its window ends, or a flood of new keys would lift it: when
   * the oldest hundred are all locked out, nothing goes and the map grows past `maxKeys`, by at
   * most one key per `limit` failures within a window.
   */
  function forgetOne(now: number): void {
    for (let looked = 0; looked < 100; looked++) {
      const [key, entry] = failures.entries().next().value!;
      failures.delete(key);
      if (!lockedOut(entry, now)) return;
      failures.set(key, entry);
    }
  }

  const limiter = {
    check(key: string): void {
      const entry = failures.get(key);
      if (!entry) return;
      const elapsed = nowMs() - entry.windowStartMs;
      if (elapsed > windowMs) failures.delete(key);
      else if (entry.count >= limit) {
        throw new ServiceError('RATE_LIMITED', `too many failed ${what}; wait before retrying`, {
          headers: { 'retry-after': String(Math.ceil((windowMs - elapsed) / 1000)) },
        });
      }
    },
    record(key: string): void {
      const now = nowMs();
      const entry = failures.get(key);
      if (entry && now - entry.windowStartMs <= windowMs) {
        entry.count++;
        return;
      }
      failures.delete(key);
      if (failures.size >= maxKeys) forgetOne(now);
      failures.set(key, { count: 1, windowStartMs: now });
    },
    /**
     * Checks and counts an attempt before it runs, so concurrent attempts cannot all pass the
     * check: call the returned function to give the attempt back once it turns out not to fail.
     */
    reserve(key: string): () => void {
      limiter.check(key);
      limiter.record(key);
      const entry = failures.get(key)!;
      return () => {
        if (failures.get(key) === entry) entry.count--;
      };
    },
  };
  return limiter;
}

/** A client address as one limiter key: IPv6 by its /64, which one client usually holds whole. */
export function addressKey(ip: string): string {
  if (!isIPv6(ip) || /^::ffff:/i.test(ip)) return ip;
  const [head, tail = ''] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = ip.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups.slice(0, 4).map((g) => g.toLowerCase().replace(/^0+(?=.)/, '')).join(':')}::/64`;
}
