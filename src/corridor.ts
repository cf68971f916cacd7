import type { ServerResponse } from 'node:http';
import pino, { type Logger } from 'pino';
import type { FastifyRequest } from 'fastify';
import type { Config } from './config.js';
import { systemClock, type Clock } from './core/clock.js';
import { releaseJobLeases } from './core/jobs.js';
import { openDatabase, type Database } from './db/database.js';
import { migrateToLatest, refuseNewerSchema, schemaState, type MigrationProgress } from './db/migrate.js';
import { PGLITE_VACUUM_INTERVAL_MS, vacuumWhereDue } from './db/pglite-vacuum.js';
import { buildHttpApp } from './http/app.js';
import { settlesWithin } from './http/deadline.js';
import { releaseInFlightKeys } from './http/idempotency.js';
import { createMaintenance } from './maintenance.js';
import { createServices, type Services } from './services.js';

/** Database, services and logger: what CLI commands need (no HTTP app, no workers). */
export interface CorridorCore {
  config: Config;
  database: Database;
  services: Services;
  log: Logger;
  clock: Clock;
  /** Closes the database when this instance opened it (`force`: see `Database.close`). */
  close(options?: { force?: boolean }): Promise<void>;
}

export interface Corridor extends Omit<CorridorCore, 'close'> {
  app: Awaited<ReturnType<typeof buildHttpApp>>;
  /** Starts the background workers (job runner, webhook delivery, maintenance). */
  startWorkers(): void;
  /**
   * Stops the HTTP server and the workers, letting what is in flight finish for at most
   * `config.shutdownTimeoutMs`: past that, the connections still open are closed and the rest
   * is cut off (`cutOff` in the outcome). Closes the database when this instance opened it.
   */
  close(): Promise<ShutdownOutcome>;
}

/** How a server's shutdown ended. */
export interface ShutdownOutcome {
  /**
   * The limit (`shutdownTimeoutMs`) was reached with work still in flight, and it was given up
   * on: connections closed under their requests, the job round cut off, webhook tries
   * interrupted. What was cut off runs again later (jobs when their lease ends, webhooks from
   * the next process), but the stop was not clean: `corridor start` exits with
   * `EXIT_SHUTDOWN_CUT_OFF` rather than 0.
   */
  cutOff: boolean;
}

export interface CorridorOptions {
  config: Config;
  /** Reuse an open database (tests share one per worker); otherwise one is opened from config. */
  database?: Database;
  clock?: Clock;
  logger?: Logger | false;
  /** Where log lines go (tests capture them to check that no secret leaks). */
  logDestination?: NodeJS.WritableStream;
  /**
   * False for commands on an existing database: one without the current schema is refused rather
   * than created or migrated (under servers that may still run on it).
   */
  migrate?: boolean;
  /** Told the name of each migration as it starts (the CLI prints it: some take minutes on a big database). */
  onMigration?: MigrationProgress;
}

const MAINTENANCE_INTERVAL_MS = 10 * 60_000;
/** How often a shutdown still draining says what it waits for (more often under a short limit). */
const DRAIN_PROGRESS_INTERVAL_MS = 5_000;

/** The first maintenance runs this soon after start, not a whole interval later (after a restart, say). */
export const FIRST_MAINTENANCE_DELAY_MS = 30_000;

/** Path segments that are secrets themselves: device codes and invitation codes. */
const SECRET_SEGMENTS = /(\/(?:device-codes|invitations)\/)[^/?#]+/g;

/** A request as debug-level request lines show it (Fastify's fields), without secrets in its URL. */
function requestForLog(request: FastifyRequest) {
  return {
    method: request.method,
    url: request.url.replace(SECRET_SEGMENTS, '$1[redacted]'),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

function createLogger(options: CorridorOptions): Logger {
  if (options.logger) return options.logger;
  return pino(
    {
      level: options.logger === false ? 'silent' : options.config.logLevel,
      redact: { paths: ['req.headers.authorization', 'headers.authorization', '*.clientSecret', '*.otp', '*.accessToken'], censor: '[redacted]' },
      serializers: { req: requestForLog },
    },
    options.logDestination,
  );
}

/**
 * A PGlite data directory is locked to the process that opened it (`openDatabase`), so whatever
 * is leased in it when this process opens it was leased by one that died: its jobs and its
 * requests' Idempotency-Keys are released now rather than after their one-minute lease, so that
 * a clock advance right after a restart runs every job that is due (docs/api/sandbox.md).
 * PostgreSQL may be shared by live processes: there the leases run out.
 */
async function releaseDeadLeases(database: Database): Promise<void> {
  await releaseJobLeases(database.db);
  await releaseInFlightKeys(database);
}

async function requireCurrentSchema(database: Database): Promise<void> {
  const state = await schemaState(database.db);
  refuseNewerSchema(state);
  if (state.pending.length) {
    throw new Error('the database holds no Corridor schema, or an older one: check DATABASE_URL / DATA_DIR, or run `corridor migrate` first');
  }
}

/** Opens the database, migrates (unless `migrate` is false) and builds the services. */
export async function createCore(options: CorridorOptions): Promise<CorridorCore> {
  const { config } = options;
  const log = createLogger(options);
  const ownsDatabase = !options.database;
  const database = options.database ?? (await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: config.dbPoolSize }));
  try {
    if (options.migrate !== false) await migrateToLatest(database.db, options.onMigration);
    else await requireCurrentSchema(database);
  } catch (error) {
    if (ownsDatabase) await database.close();
    throw error;
  }
  if (ownsDatabase && database.kind === 'pglite') await releaseDeadLeases(database);
  const clock = options.clock ?? systemClock;
  const services = createServices({ config, database, clock, log });
  return {
    config,
    database,
    services,
    log,
    clock,
    close: async (closeOptions) => {
      if (ownsDatabase) await database.close(closeOptions);
    },
  };
}

/** Makes Node end the connection once this answer is sent, unless its headers are already out. */
function closesItsConnection(response: ServerResponse): void {
  if (!response.headersSent) response.setHeader('connection', 'close');
}

/** The composition root of a server: the core plus the HTTP app and the background workers. */
export async function createCorridor(options: CorridorOptions): Promise<Corridor> {
  const core = await createCore(options);
  const { config, database, services, log, clock } = core;
  const app = await buildHttpApp({ config, database, clock, log }, services, { logger: options.logger === false ? false : log });
  const maintenance = createMaintenance({ config, database, clock, log });
  let firstMaintenance: NodeJS.Timeout | undefined;
  let maintaining: NodeJS.Timeout | undefined;
  let vacuuming: NodeJS.Timeout | undefined;
  let closed: Promise<ShutdownOutcome> | undefined;
  // Answers to requests whose headers have arrived, not yet sent (or whose connection has not dropped).
  const answering = new Set<ServerResponse>();
  let draining = false;
  let idleSweep: NodeJS.Immediate | undefined;
  app.server.on('request', (_request, response) => {
    answering.add(response);
    if (draining) closesItsConnection(response);
    response.once('close', () => {
      answering.delete(response);
      // The server closes the connections idle when the shutdown starts, not those that become
      // idle later: a kept-alive connection whose answer went out before the drain held the
      // shutdown until its limit. Its request is done, so it goes now (once Node counts it idle).
      if (draining) idleSweep ??= setImmediate(() => {
        idleSweep = undefined;
        app.server.closeIdleConnections();
      });
    });
  });
  /** Draining: answers not yet sent say `Connection: close`, so a client does not reuse a connection about to go. */
  const startDraining = () => {
    draining = true;
    for (const response of answering) closesItsConnection(response);
  };
  const openConnections = () =>
    new Promise<number>((resolve) => app.server.getConnections((err, count) => resolve(err ? -1 : count)));
  const inFlight = async () => ({ requestsInFlight: answering.size, connections: await openConnections(), webhookTries: services.webhooks.triesInFlight() });

  /**
   * The shutdown: the HTTP server stops taking requests (new ones on open connections get 503)
   * and those in flight finish; then the job runner ends its round. The webhook worker stops
   * claiming events at once and lets its tries in flight finish (each is bounded by its own
   * timeout): an approval request the platform is answering must get its answer, not be sent
   * again after the restart. All of it within `shutdownTimeoutMs`; what is left then is cut off. Node stops enforcing REQUEST_TIMEOUT_MS once the
   * server is closing, so without the limit a client sending its body a byte now and then, or a
   * request waiting on a database lock, held the process for as long as it liked.
   */
  async function shutdown(): Promise<ShutdownOutcome> {
    clearTimeout(firstMaintenance);
    clearInterval(maintaining);
    if (vacuuming) clearInterval(vacuuming);
    const limitMs = config.shutdownTimeoutMs;
    const deadline = Date.now() + limitMs;
    const left = () => Math.max(0, deadline - Date.now());
    const progressMs = Math.min(DRAIN_PROGRESS_INTERVAL_MS, Math.max(250, Math.floor(limitMs / 3)));
    const progress = setInterval(() => {
      void inFlight().then((state) => log.info({ ...state, msLeft: left() }, 'shutting down: waiting for requests in flight'));
    }, progressMs).unref();
    // `cutOff`: work in flight was given up on (the outcome). `forceDatabase`: statements may still be running.
    let cutOff = false;
    let forceDatabase = false;
    try {
      const webhooksStopped = services.webhooks.stop(limitMs);
      startDraining();
      const httpClosed = app.close();
      if (!(await settlesWithin(httpClosed, left()))) {
        forceDatabase = true;
        const state = await inFlight();
        // A connection without a request (its headers still coming) holds no work to give up on.
        if (state.requestsInFlight > 0) cutOff = true;
        log.warn({ ...state, limitMs }, 'shutdown limit (SHUTDOWN_TIMEOUT_MS) reached: closing the connections still open');
        app.server.closeAllConnections();
        // The server closes once its connections are gone; its onClose hooks are quick.
        await settlesWithin(httpClosed, 1_000);
      }
      if (!(await settlesWithin(services.jobs.stop(), left()))) {
        forceDatabase = cutOff = true;
        log.warn({ limitMs }, 'shutdown limit (SHUTDOWN_TIMEOUT_MS) reached: the job round in progress is cut off; its jobs run again when their lease ends');
      }
      // The worker logs the tries it interrupted (they hold no database connection once it returns).
      if (!(await webhooksStopped)) cutOff = true;
      await settlesWithin(maintenance.settled(), left());
    } finally {
      clearInterval(progress);
    }
    // Past the limit, statements still running (a request waiting on a lock) are ended with their connections.
    await core.close({ force: forceDatabase });
    return { cutOff };
  }

  return {
    ...core,
    app,
    startWorkers() {
      services.jobs.start();
      services.webhooks.start();
      // Each step logs its own failure; run() never rejects.
      firstMaintenance = setTimeout(() => void maintenance.run(), FIRST_MAINTENANCE_DELAY_MS).unref();
      maintaining = setInterval(() => void maintenance.run(), MAINTENANCE_INTERVAL_MS).unref();
      if (database.kind === 'pglite') {
        vacuuming = setInterval(() => {
          vacuumWhereDue(database).then(
            (tables) => {
              if (tables.length > 0) log.debug({ tables }, 'vacuumed');
            },
            (err) => log.warn({ err }, 'vacuum failed'),
          );
        }, PGLITE_VACUUM_INTERVAL_MS).unref();
      }
    },
    close() {
      closed ??= shutdown();
      return closed;
    },
  };
}
