import pino, { type Logger } from 'pino';
import type { Config } from './config.js';
import { systemClock, type Clock } from './core/clock.js';
import { openDatabase, type Database } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { buildHttpApp } from './http/app.js';
import { pruneIdempotencyKeys } from './http/idempotency.js';
import { createServices, type Services } from './services.js';

export interface Corridor {
  config: Config;
  database: Database;
  services: Services;
  app: Awaited<ReturnType<typeof buildHttpApp>>;
  log: Logger;
  /** Starts the background workers (job runner, maintenance). */
  startWorkers(): void;
  /** Stops workers and the HTTP server; closes the database when this instance opened it. */
  close(): Promise<void>;
}

export interface CorridorOptions {
  config: Config;
  /** Reuse an open database (tests share one per worker); otherwise one is opened from config. */
  database?: Database;
  clock?: Clock;
  logger?: Logger | false;
  /** Where log lines go (tests capture them to check that no secret leaks). */
  logDestination?: NodeJS.WritableStream;
}

const MAINTENANCE_INTERVAL_MS = 10 * 60_000;

/** The composition root: opens the database, migrates, builds services and the HTTP app. */
export async function createCorridor(options: CorridorOptions): Promise<Corridor> {
  const { config } = options;
  const log =
    options.logger ||
    pino(
      {
        level: config.logLevel,
        redact: { paths: ['req.headers.authorization', 'headers.authorization', '*.clientSecret', '*.otp', '*.accessToken'], censor: '[redacted]' },
      },
      options.logDestination,
    );
  const ownsDatabase = !options.database;
  const database = options.database ?? (await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: config.dbPoolSize }));
  await migrateToLatest(database.db);
  const clock = options.clock ?? systemClock;
  const deps = { config, database, clock, log };
  const services = createServices(deps);
  const app = await buildHttpApp(deps, services, { logger: options.logger === false ? false : log });
  let maintenance: NodeJS.Timeout | undefined;

  return {
    config,
    database,
    services,
    app,
    log,
    startWorkers() {
      services.jobs.start();
      services.webhooks.start();
      maintenance = setInterval(() => {
        pruneIdempotencyKeys(database, clock.realNowMs()).catch((err) => log.warn({ err }, 'idempotency pruning failed'));
      }, MAINTENANCE_INTERVAL_MS).unref();
    },
    async close() {
      if (maintenance) clearInterval(maintenance);
      await services.jobs.stop();
      await services.webhooks.stop();
      await app.close();
      if (ownsDatabase) await database.close();
    },
  };
}
