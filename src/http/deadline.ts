import { setTimeout as delay } from 'node:timers/promises';

/**
 * `work`'s value, or `otherwise` if it fails or takes longer than `ms`: for probes that must answer
 * while the database is down or locked (`/healthz`, `/metrics`). The timer does not keep the
 * process alive; `work` itself is left to finish or fail on its own.
 */
export function settleWithin<T>(work: Promise<T>, ms: number, otherwise: T): Promise<T> {
  return Promise.race([work.catch(() => otherwise), delay(ms, otherwise, { ref: false })]);
}
