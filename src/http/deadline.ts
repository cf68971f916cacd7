import { setTimeout as delay } from 'node:timers/promises';

/**
 * `work`'s value, or `otherwise` if it fails or takes longer than `ms`: for probes that must answer
 * while the database is down or locked (`/healthz`, `/metrics`). The timer does not keep the
 * process alive; `work` itself is left to finish or fail on its own.
 */
export function settleWithin<T>(work: Promise<T>, ms: number, otherwise: T): Promise<T> {
  return Promise.race([work.catch(() => otherwise), delay(ms, otherwise, { ref: false })]);
}

/**
 * Whether `work` settles (either way: callers log their own failures) within `ms`. For waits that
 * must end (a shutdown's drain); the timer is cleared as soon as the work settles.
 */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([work.then(() => true, () => true), late]);
  } finally {
    clearTimeout(timer);
  }
}
