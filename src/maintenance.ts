import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Clock } from './core/clock.js';
import { pruneEvents } from './core/events.js';
import type { Database } from './db/database.js';
import { pruneIdempotencyKeys } from './http/idempotency.js';
import { pruneLookups } from './modules/quotes/repository.js';
import { pruneInvoices } from './modules/uma/repository.js';
import { CHALLENGE_RETENTION_MS, ENDED_SESSION_RETENTION_MS, pruneAuthChallenges, pruneSessions } from './modules/wallets/repository.js';
import { pruneSignedRetryChallenges } from './modules/wallets/signed-retry.js';

const DAY_MS = 86_400_000;
/** Lookups (usable 15 minutes) that no quote named are kept a day. */
const LOOKUP_RETENTION_MS = DAY_MS;
/** Invoices no payment was accepted for are kept a day past their expiry. */
const UNPAID_INVOICE_RETENTION_MS = DAY_MS;

export interface MaintenanceDeps {
  config: Pick<Config, 'eventRetentionDays'>;
  database: Database;
  clock: Clock;
  log: Logger;
}

/**
 * The periodic maintenance of a server: deletes rows past their use, table by table, one after
 * the other, each in batches. Every cut-off is in real time (a sandbox's test clock may be years
 * ahead). A failing step is logged and the others still run.
 */
export function createMaintenance(deps: MaintenanceDeps) {
  const { config, database, clock, log } = deps;
  const { db } = database;
  let current: Promise<void> | undefined;
  // Lookups before this were pruned already: those left there are named by quotes, for good.
  let lookupsSince: Date | undefined;

  async function step(table: string, prune: () => Promise<number>): Promise<void> {
    try {
      const deleted = await prune();
      if (deleted > 0) log.debug({ table, deleted }, 'pruned');
    } catch (err) {
      log.warn({ err, table }, `${table} pruning failed`);
    }
  }

  async function pruneAll(): Promise<void> {
    const nowMs = clock.realNowMs();
    const ago = (ms: number) => new Date(nowMs - ms);
    await step('idempotency', () => pruneIdempotencyKeys(database, nowMs));
    await step('event', () => pruneEvents(db, ago(config.eventRetentionDays * DAY_MS)));
    await step('wallet challenge', () => pruneAuthChallenges(db, ago(CHALLENGE_RETENTION_MS)));
    await step('signed-retry challenge', () => pruneSignedRetryChallenges(db, ago(CHALLENGE_RETENTION_MS)));
    await step('wallet session', () => pruneSessions(db, ago(ENDED_SESSION_RETENTION_MS)));
    await step('lookup', async () => {
      const before = ago(LOOKUP_RETENTION_MS);
      const deleted = (await pruneLookups(db, 'lookups', before, lookupsSince)) + (await pruneLookups(db, 'uma_lookups', before, lookupsSince));
      lookupsSince = before;
      return deleted;
    });
    await step('UMA invoice', () => pruneInvoices(db, ago(UNPAID_INVOICE_RETENTION_MS)));
  }

  return {
    /** One pass over every table; a call while one runs waits for that one instead. */
    run(): Promise<void> {
      current ??= pruneAll().finally(() => {
        current = undefined;
      });
      return current;
    },
    /** Resolves once no pass is running (before the database closes). */
    async settled(): Promise<void> {
      await current;
    },
  };
}
