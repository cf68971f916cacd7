import type { Logger } from 'pino';
import { toRealTime, type Clock } from '../../core/clock.js';
import { privateTargetsAllowed } from '../../core/outbound.js';
import { PollFailures } from '../../core/poll-failures.js';
import type { Database } from '../../db/database.js';
import { createWriteBatcher, type WriteBatcher } from '../../db/write-batcher.js';
import { settlesWithin } from '../../http/deadline.js';
import { DeliveryInterrupted, describeOutcome, sendWebhook, type DeliveryOutcome, type Envelope } from './delivery.js';
import type { ResponseHooks } from './hooks.js';
import type { SigningKeys } from './keys.js';
import { nextState, RETRY_WINDOW_MS } from './policy.js';
import * as repo from './repository.js';
import type { ClaimedEvent, DueEvent } from './repository.js';

export interface DeliverySettings {
  /** Tries in flight at once in this process. */
  concurrency: number;
  /** Of those, at most this many for one platform, so one slow receiver cannot take every slot. */
  perPlatformConcurrency: number;
  /** Time allowed for one try, answer included. */
  timeoutMs: number;
  /** How often an idle worker looks for due events. */
  pollIntervalMs: number;
  /** How long a claim stays with this process; must exceed timeoutMs plus the handlers' time. */
  leaseMs: number;
  /** Whether production platforms' endpoints may be private addresses (WEBHOOK_ALLOW_PRIVATE_ENDPOINTS); sandbox ones always may. */
  allowPrivateEndpoints: boolean;
}

export const DEFAULT_DELIVERY_SETTINGS: DeliverySettings = {
  concurrency: 32,
  perPlatformConcurrency: 16,
  timeoutMs: 10_000,
  pollIntervalMs: 500,
  leaseMs: 60_000,
  allowPrivateEndpoints: false,
};

export interface WebhookWorkerDeps {
  database: Database;
  clock: Clock;
  log: Logger;
  keys: SigningKeys;
  hooks: ResponseHooks;
}

const RECORD_BATCHING = { kind: 'webhook.attempt' };

export function envelopeOf(event: ClaimedEvent): Envelope {
  return { id: event.id, type: event.type, timestamp: event.createdAt.toISOString(), data: event.data };
}

/**
 * Delivers the outbox: claims due events as many at a time as there are free slots (FOR UPDATE
 * SKIP LOCKED, under a lease), keeps up to `concurrency` tries in flight, and records outcomes
 * (several to a statement when tries end together). No transaction is open while a receiver is
 * being called.
 */
export class WebhookWorker {
  private readonly inFlight = new Set<Promise<void>>();
  private readonly perPlatform = new Map<string, number>();
  private shutdown = new AbortController();
  private running = false;
  /** Set by `stop()`: no more claims, while the tries in flight may still finish. */
  private stopping = false;
  private loop?: Promise<void>;
  private wakeUp?: () => void;
  private fillQueue: Promise<unknown> = Promise.resolve();
  /** Outcomes of tries that end together are recorded in one statement. */
  private readonly records: WriteBatcher;
  /** Logs and paces polls that fail (the database down): one line a minute, backing off to 5 s. */
  private readonly pollFailures: PollFailures;

  constructor(
    private readonly deps: WebhookWorkerDeps,
    readonly settings: DeliverySettings = DEFAULT_DELIVERY_SETTINGS,
  ) {
    this.records = createWriteBatcher(deps.database);
    this.pollFailures = new PollFailures(deps.log, 'webhook poll', settings.pollIntervalMs);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = false;
    this.shutdown = new AbortController();
    this.loop = this.runLoop();
  }

  /**
   * Stops claiming events at once, gives the tries in flight up to `graceMs` to finish (each is
   * bounded by `timeoutMs` anyway), then interrupts those left and hands their events back for
   * the next process. Interrupting a try whose receiver was about to answer sends it again later:
   * an ordinary event arrives twice, and an approval request (INCOMING_PAYMENT.PENDING) that the
   * platform had approved finds the receiver answering 409 (already seen) and the payment fails.
   * Resolves to whether every try in flight finished (false: some were interrupted).
   */
  async stop(graceMs = 0): Promise<boolean> {
    if (!this.running) return true;
    this.running = false;
    this.stopping = true;
    this.wakeUp?.();
    await this.loop;
    const finished = Promise.allSettled([...this.inFlight]);
    let interrupted = false;
    if (this.inFlight.size > 0 && !(await settlesWithin(finished, graceMs))) {
      if (graceMs > 0) this.deps.log.warn({ tries: this.inFlight.size, graceMs }, 'webhook tries still in flight at the shutdown limit: interrupted; their events are sent again by the next process');
      this.shutdown.abort();
      interrupted = true;
    }
    await Promise.allSettled([...this.inFlight]);
    return !interrupted;
  }

  /** Tries in flight now. */
  get triesInFlight(): number {
    return this.inFlight.size;
  }

  /** Makes an idle worker look for due events now instead of at its next poll. */
  wake(): void {
    this.wakeUp?.();
  }

  /** Delivers every event due now and waits for those tries to finish. Returns the number of tries. */
  async deliverDue(): Promise<number> {
    let tries = 0;
    for (;;) {
      // A fill that found nothing while tries were in flight may have skipped their platforms as
      // full: only a fill with none in flight, before or after, shows that nothing is due.
      const busy = this.inFlight.size > 0;
      const launched = await this.fill();
      tries += launched;
      if (this.inFlight.size > 0) await Promise.race(this.inFlight);
      else if (launched === 0 && !busy) return tries;
    }
  }

  private async runLoop(): Promise<void> {
    while (this.running) {
      let waitMs: number;
      try {
        await this.fill();
        waitMs = this.pollFailures.succeeded();
      } catch (err) {
        waitMs = this.pollFailures.failed(err);
      }
      await this.idle(waitMs);
    }
  }

  private idle(waitMs: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = undefined;
        resolve();
      };
      const timer = setTimeout(done, waitMs);
      this.wakeUp = done;
    });
  }

  /** Claims and starts tries until the slots are full or nothing is due. Calls are serialized. */
  private fill(): Promise<number> {
    const run = this.fillQueue.then(() => this.claimAndLaunch());
    this.fillQueue = run.catch(() => undefined);
    return run;
  }

  private async claimAndLaunch(): Promise<number> {
    let launched = 0;
    for (;;) {
      const free = this.settings.concurrency - this.inFlight.size;
      if (free <= 0 || this.stopping) return launched;
      const nowMs = this.deps.clock.realNowMs();
      const events = await repo.claimDueEvents(this.deps.database.db, {
        now: new Date(nowMs),
        leaseUntil: new Date(nowMs + this.settings.leaseMs),
        limit: free,
        perPlatform: this.settings.perPlatformConcurrency,
        room: this.platformRoom(),
      });
      if (events.length === 0) return launched;
      for (const event of events) this.launch(event);
      launched += events.length;
    }
  }

  /** What each platform this process is serving has left of its share of the slots. */
  private platformRoom(): Map<string, number> {
    return new Map([...this.perPlatform].map(([id, n]) => [id, this.settings.perPlatformConcurrency - n]));
  }

  private launch(event: DueEvent): void {
    this.countPlatform(event.platformId, 1);
    const task: Promise<void> = this.attempt(event)
      .catch((err) => this.deps.log.error({ err, eventId: event.id }, 'webhook delivery could not be recorded; it is retried when its lease ends'))
      .finally(() => {
        this.inFlight.delete(task);
        this.countPlatform(event.platformId, -1);
        this.wakeUp?.();
      });
    this.inFlight.add(task);
  }

  private countPlatform(platformId: string, delta: number): void {
    const n = (this.perPlatform.get(platformId) ?? 0) + delta;
    if (n > 0) this.perPlatform.set(platformId, n);
    else this.perPlatform.delete(platformId);
  }

  private async attempt(event: DueEvent): Promise<void> {
    const { database, clock, hooks } = this.deps;
    const { platform } = event;
    const envelope = envelopeOf(event);
    let outcome: DeliveryOutcome;
    try {
      outcome = await this.send(event, envelope);
    } catch (error) {
      if (!(error instanceof DeliveryInterrupted)) throw error;
      await repo.releaseClaim(database.db, event, new Date(clock.realNowMs()));
      return;
    }
    const nowMs = clock.realNowMs();
    // The retry window is measured on the platform's clock, from the event's own timestamp.
    const giveUpAtMs = toRealTime(platform, new Date(event.createdAt.getTime() + RETRY_WINDOW_MS)).getTime();
    const next = nextState(outcome, { type: event.type, attempt: event.attempts, nowMs, giveUpAtMs });
    this.log(event, outcome, next.state);
    // Handlers run before the outcome is recorded: a crash in between repeats the try, never skips the handlers.
    await hooks.notify({ event: { ...envelope, platformId: event.platformId }, outcome, attempt: event.attempts, willRetry: next.state === 'PENDING' });
    await this.records.write(RECORD_BATCHING, [repo.attemptRecord(database.db, event, next, new Date(nowMs))]);
  }

  private send({ platformId, platform }: DueEvent, envelope: Envelope): Promise<DeliveryOutcome> {
    const url = platform.webhookEndpoint;
    if (!url) return Promise.resolve({ kind: 'no_endpoint' });
    return sendWebhook(this.deps.keys, platformId, url, envelope, {
      timeoutMs: this.settings.timeoutMs,
      allowPrivate: privateTargetsAllowed(platform, this.settings.allowPrivateEndpoints),
      shutdown: this.shutdown.signal,
    });
  }

  private log(event: ClaimedEvent, outcome: DeliveryOutcome, state: string): void {
    if (state === 'DELIVERED' || state === 'SKIPPED') return;
    const level = state === 'FAILED' ? 'warn' : 'debug';
    this.deps.log[level]({ eventId: event.id, platformId: event.platformId, type: event.type, attempt: event.attempts, state }, `webhook try failed: ${describeOutcome(outcome)}`);
  }
}
