import type { Logger } from 'pino';

/** While polls keep failing, how often a line says they still do. */
export const STILL_FAILING_LOG_MS = 60_000;
/** The longest wait between polls while they fail. */
export const MAX_FAILING_POLL_INTERVAL_MS = 5_000;

/**
 * How a polling loop (the job runner's, the webhook worker's) logs and paces polls that fail,
 * the database being down, say. The first failure is logged with its error; then one line a
 * minute while they go on failing, and one when a poll succeeds again. Each failure doubles the
 * wait before the next poll, up to 5 s. Before, every poll logged its stack (the job runner every
 * 250 ms, the webhook worker every 500 ms): 28 MB of log an hour while the database was down.
 */
export class PollFailures {
  private failures = 0;
  private failingSinceMs = 0;
  private loggedAtMs = 0;

  constructor(
    private readonly log: Pick<Logger, 'error' | 'info'>,
    /** What polls, as log lines name it ("job poll"). */
    private readonly what: string,
    /** The wait between polls that succeed. */
    private readonly intervalMs: number,
    private readonly nowMs: () => number = Date.now,
  ) {}

  /** Records a failed poll; returns the wait before the next one. */
  failed(err: unknown): number {
    const now = this.nowMs();
    this.failures++;
    const waitMs = Math.min(MAX_FAILING_POLL_INTERVAL_MS, Math.max(this.intervalMs, this.intervalMs * 2 ** this.failures));
    if (this.failures === 1) {
      this.failingSinceMs = now;
      this.loggedAtMs = now;
      this.log.error({ err, nextPollInMs: waitMs }, `${this.what} failed; while it keeps failing, one line a minute`);
    } else if (now - this.loggedAtMs >= STILL_FAILING_LOG_MS) {
      this.loggedAtMs = now;
      const error = err instanceof Error ? err.message : String(err);
      this.log.error({ error, failures: this.failures, failingForMs: now - this.failingSinceMs, nextPollInMs: waitMs }, `${this.what} still failing`);
    }
    return waitMs;
  }

  /** Records a poll that succeeded; returns the wait before the next one. */
  succeeded(): number {
    if (this.failures > 0) {
      this.log.info({ failures: this.failures, failedForMs: this.nowMs() - this.failingSinceMs }, `${this.what} recovered`);
      this.failures = 0;
    }
    return this.intervalMs;
  }
}
