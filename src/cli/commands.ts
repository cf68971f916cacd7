import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { constants } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { createPlatformWithToken, ensureSandboxPlatform, type SandboxBootstrap } from '../bootstrap.js';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { createCore, createCorridor, type Corridor, type CorridorCore } from '../corridor.js';
import { openDatabase } from '../db/database.js';
import { migrateToLatest, type MigrationProgress } from '../db/migrate.js';
import { API_PREFIX } from '../http/app.js';
import { PERMISSIONS, type Permission } from '../modules/tokens/schemas.js';
import { VERIFICATION_STATES, type VerificationState } from '../modules/compliance/schemas.js';

const USAGE = `Usage: corridor <command> [options]

Commands:
  start                                   start the HTTP server and workers
  migrate                                 apply database migrations and exit
  platform create --name NAME [--production] [--regulated] [--json]
                                          create a platform and its first API token
  token create --platform ID [--name NAME] [--permissions VIEW,TRANSACT,MANAGE] [--json]
                                          create an API token for a platform
  ledger verify [--platform ID] [--json]  check the ledger's invariants; exits 1 on any problem
  verification list [--platform ID] [--status STATUS] [--json]
                                          list verifications (default: those waiting for review)
  verification resolve --id ID --status APPROVED|REJECTED [--reason TEXT] [--json]
                                          decide a verification waiting for manual review

Configuration comes from the environment (PORT, HOST, DATABASE_URL, DATA_DIR, LOG_LEVEL, ...);
see the README.`;

class UsageError extends Error {}

/** Where command output goes (tests capture it). */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  env: Record<string, string | undefined>;
}

let io: CliIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
};

function out(line = ''): void {
  io.out(line);
}

/** Progress lines on stderr, so that stdout keeps the result alone (--json), each with the seconds since the first. */
function progressLines(): (step: string) => void {
  const started = Date.now();
  return (step) => io.err(`  [${((Date.now() - started) / 1000).toFixed(1)} s] ${step}…`);
}

/**
 * Says which migration runs: on a big database one may lock tables for minutes (README "Upgrading").
 * With `briefWhenFresh`, a database with no schema yet gets one line instead of one per migration.
 */
function migrationProgress(briefWhenFresh = false): MigrationProgress {
  const progress = progressLines();
  let creating = false;
  return (name, fresh) => {
    if (!fresh || !briefWhenFresh) progress(`applying migration ${name}`);
    else if (!creating) {
      creating = true;
      progress('creating the database schema');
    }
  };
}

/** An embedded database in memory is gone when the command exits, and with it whatever the command made. */
function refuseMemory(config: Config, command: string): void {
  if (!config.databaseUrl && config.dataDir === 'memory') {
    throw new Error(`${command} with DATA_DIR=memory would make a database that is gone when it exits: set DATA_DIR to the directory the server uses (or DATABASE_URL)`);
  }
}

/**
 * Runs a command against the database and services, without the HTTP app or workers. With
 * `existing`, an embedded database must already be there: a mistyped DATA_DIR (or
 * DATA_DIR=memory, new in every process) would otherwise open a new, empty one and report on that
 * (a ledger with nothing wrong in it, say).
 */
async function withCorridor<T>(config: Config, work: (corridor: CorridorCore) => Promise<T>, options: { existing?: boolean } = {}): Promise<T> {
  const embedded = !config.databaseUrl;
  if (options.existing && embedded && (config.dataDir === 'memory' || !existsSync(join(config.dataDir, 'pglite')))) {
    throw new Error(`no database in ${config.dataDir}: set DATA_DIR to the directory the server uses (or DATABASE_URL)`);
  }
  const corridor = await createCore({ config: { ...config, logLevel: 'error' }, migrate: !options.existing, onMigration: migrationProgress(true) });
  try {
    return await work(corridor);
  } finally {
    await corridor.close();
  }
}

/** A `--platform` the database does not hold is a usage error (a typo, most likely), not an empty result. */
async function requirePlatform(corridor: CorridorCore, platformId: string) {
  const platform = await corridor.services.platforms.get(platformId);
  if (!platform) throw new UsageError(`no platform ${platformId}`);
  return platform;
}

/**
 * A sandbox platform's new credentials, printed as soon as they exist: the client secret is
 * stored only as a hash, so this is its one copy. Printed after listening, a port already in use
 * or a signal during start-up lost it.
 */
function printNewCredentials(result: SandboxBootstrap): void {
  if (result.kind !== 'created') return;
  const { platform, token } = result.credentials;
  out(`Created sandbox platform ${platform.id}; its client secret is shown only now: store it`);
  out(`  Client id:      ${token.clientId}`);
  out(`  Client secret:  ${token.clientSecret}`);
}

function printBootstrap(result: SandboxBootstrap, baseUrl: string, pglite: boolean): void {
  out(`  API base URL:   ${baseUrl}${API_PREFIX}`);
  out(`  API reference:  ${baseUrl}/docs`);
  if (result.kind === 'created') {
    const { platform, token } = result.credentials;
    out(`  Sandbox platform ${platform.id}`);
    out(`  Client id:      ${token.clientId} (client secret printed above)`);
    out(`  Try: curl -u ${token.clientId}:${token.clientSecret} ${baseUrl}${API_PREFIX}/config`);
  } else if (result.kind === 'configured') {
    out(`  Sandbox platform ${result.platformId}`);
    out(`  Client id:      ${result.clientId} (client secret from SERVICE_SANDBOX_CLIENT_SECRET)`);
  } else {
    for (const p of result.platforms) out(`  Platform ${p.id} (${p.name}, ${p.mode.toLowerCase()})`);
    out('  Use the credentials printed when the platform was created, or make new ones with');
    out(`  npx corridor token create --platform ${result.platforms[0].id}`);
    if (pglite) out('  (after stopping this server: the embedded database takes one process at a time)');
  }
}

/**
 * The first lines `start` prints: the address the server is bound to (HOST and the port it got),
 * and PUBLIC_URL apart when it differs, since that is not where this process listens.
 */
export function listeningLines(config: Pick<Config, 'host' | 'publicUrl' | 'dataDir'>, port: number, pglite: boolean): string[] {
  const bound = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  const storage = pglite ? `embedded PGlite in ${config.dataDir}` : 'PostgreSQL';
  const lines = [`Corridor is listening on ${bound} (${storage})`];
  if (config.publicUrl !== bound) lines.push(`  Public URL:     ${config.publicUrl}`);
  return lines;
}

async function start(config: Config): Promise<void> {
  // Links and the default UMA domain are made from the public URL before the server listens.
  if (new URL(config.publicUrl).port === '0') {
    throw new ConfigError('PORT', 'may be 0 (any free port) only with PUBLIC_URL set, which links and the UMA domain are made from');
  }
  const corridor = await createCorridor({ config, onMigration: migrationProgress(true) });
  let result: SandboxBootstrap;
  try {
    result = await ensureSandboxPlatform(corridor.services, corridor.database, {
      tokenId: config.sandboxTokenId,
      clientSecret: config.sandboxClientSecret,
    });
    // A platform made for pinned credentials has no secret to print: the environment holds it.
    if (config.sandboxTokenId && result.kind === 'created') result = { kind: 'configured', platformId: result.credentials.platform.id, clientId: config.sandboxTokenId };
    printNewCredentials(result);
    await corridor.app.listen({ port: config.port, host: config.host });
  } catch (error) {
    // The port is taken, say: close the database (and free PGlite's lock) before reporting it.
    await corridor.close().catch(() => {});
    throw error;
  }
  if (config.runWorkers) corridor.startWorkers();
  const { port } = corridor.app.server.address() as AddressInfo;
  for (const line of listeningLines(config, port, corridor.database.kind === 'pglite')) out(line);
  printBootstrap(result, config.publicUrl, corridor.database.kind === 'pglite');

  stopOnSignals(corridor);
}

/** The signals that stop a started server gracefully. SIGHUP too: a closed terminal or a supervisor's stop. */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** Beyond the shutdown limit, how long closing the workers and the database may take before the process exits anyway. */
export const CLOSE_GRACE_MS = 5_000;

/**
 * A signal this soon after the one that started the shutdown is that one delivered twice, not a
 * second request: Ctrl-C in a terminal signals every process of the foreground group, so under
 * `npm start` the server gets SIGINT from the terminal and again from npm, which passes it on.
 */
export const REPEATED_SIGNAL_MS = 500;

/**
 * The exit code of a graceful stop that reached SHUTDOWN_TIMEOUT_MS with work still in flight and
 * gave up on it (connections closed under their requests, the job round cut off, webhook tries
 * interrupted): not 0, so that a supervisor or a deploy script can tell a stop that dropped work
 * from a clean one. 75 is sysexits' EX_TEMPFAIL: what was cut off is tried again (jobs when their
 * lease ends, webhooks by the next process, clients retry their requests).
 */
export const EXIT_SHUTDOWN_CUT_OFF = 75;

/** What `stopOnSignals` needs of the process (tests pass a stand-in). */
export interface SignalledProcess {
  on(signal: (typeof STOP_SIGNALS)[number], listener: () => void): unknown;
  exit(code: number): void;
}

/**
 * The first SIGINT, SIGTERM or SIGHUP starts a graceful shutdown, bounded by SHUTDOWN_TIMEOUT_MS
 * (`Corridor.close`), and exits 0 once it is done, `EXIT_SHUTDOWN_CUT_OFF` once it is done but
 * had to cut off work at the limit, 1 if it failed. Another signal while it runs
 * (`REPEATED_SIGNAL_MS` or more after the first) exits at once (128 + the signal's number, as a shell reports death by that signal): whoever
 * sends it no longer wants to wait. A close that outlives its limit by CLOSE_GRACE_MS (a database
 * connection that will not end) exits 1. PGlite's lock file goes with any of these exits
 * (`openDatabase`).
 */
export function stopOnSignals(corridor: Pick<Corridor, 'close' | 'log' | 'config'>, proc: SignalledProcess = process): void {
  let stopping = false;
  let stoppingSince = 0;
  const stop = (signal: (typeof STOP_SIGNALS)[number]) => {
    if (stopping) {
      if (Date.now() - stoppingSince < REPEATED_SIGNAL_MS) return;
      const code = 128 + constants.signals[signal];
      corridor.log.warn({ signal, code }, `${signal} while shutting down: exiting now, without waiting for what is in flight`);
      io.err(`corridor: ${signal} while shutting down: exiting now (code ${code}) without waiting for what is in flight`);
      proc.exit(code);
      return;
    }
    stopping = true;
    stoppingSince = Date.now();
    const limitMs = corridor.config.shutdownTimeoutMs;
    corridor.log.info({ signal, limitMs }, `shutting down: waiting up to ${limitMs} ms for what is in flight (${signal} again to exit now)`);
    const ceiling = setTimeout(() => {
      corridor.log.error({ limitMs, graceMs: CLOSE_GRACE_MS }, 'shutdown did not finish in time: exiting anyway');
      proc.exit(1);
    }, limitMs + CLOSE_GRACE_MS);
    ceiling.unref();
    corridor.close().then(
      ({ cutOff }) => {
        clearTimeout(ceiling);
        if (cutOff) {
          corridor.log.warn({ limitMs, code: EXIT_SHUTDOWN_CUT_OFF }, `shut down at the limit, with work in flight cut off: exiting with code ${EXIT_SHUTDOWN_CUT_OFF}`);
          io.err(`corridor: the shutdown reached SHUTDOWN_TIMEOUT_MS (${limitMs} ms) and cut off work in flight: exiting with code ${EXIT_SHUTDOWN_CUT_OFF}`);
        }
        proc.exit(cutOff ? EXIT_SHUTDOWN_CUT_OFF : 0);
      },
      (err: unknown) => {
        clearTimeout(ceiling);
        corridor.log.error({ err }, 'shutdown failed');
        io.err(`corridor: shutdown failed: ${(err as Error)?.message ?? String(err)}`);
        proc.exit(1);
      },
    );
  };
  for (const signal of STOP_SIGNALS) proc.on(signal, () => stop(signal));
}

async function migrate(config: Config): Promise<void> {
  refuseMemory(config, 'migrate');
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    const { applied } = await migrateToLatest(database.db, migrationProgress());
    out(applied.length ? `applied ${applied.length} migration(s): ${applied.join(', ')}` : 'database is up to date');
  } finally {
    await database.close();
  }
}

/** A platform's or token's name, within the API's bounds for a token name (1 to 200 characters, not blank). */
function checkedName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > 200) throw new UsageError('--name must be 1 to 200 characters, not only spaces');
  return trimmed;
}

async function platformCreate(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      name: { type: 'string' },
      production: { type: 'boolean', default: false },
      regulated: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  });
  if (!values.name) throw new UsageError('platform create needs --name');
  const name = checkedName(values.name);
  refuseMemory(config, 'platform create');
  const { platform, token } = await withCorridor(config, (c) =>
    createPlatformWithToken(
      c.services,
      { name, mode: values.production ? 'PRODUCTION' : 'SANDBOX', isRegulatedFinancialInstitution: values.regulated },
      c.database,
    ),
  );
  if (values.json) {
    // tokenId: the client id under its older name, for scripts that read it.
    out(JSON.stringify({ platformId: platform.id, mode: platform.mode, umaDomain: platform.umaDomain, clientId: token.clientId, tokenId: token.clientId, clientSecret: token.clientSecret }));
    return;
  }
  out(`Platform ${platform.id} (${platform.mode.toLowerCase()})`);
  out(`UMA domain:     ${platform.umaDomain}   (from PUBLIC_URL, else HOST:PORT)`);
  out(`Client id:      ${token.clientId}`);
  out(`Client secret:  ${token.clientSecret}   (shown once; store it now)`);
}

async function tokenCreate(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      platform: { type: 'string' },
      name: { type: 'string', default: 'CLI token' },
      permissions: { type: 'string', default: PERMISSIONS.join(',') },
      json: { type: 'boolean', default: false },
    },
  });
  if (!values.platform) throw new UsageError('token create needs --platform');
  const name = checkedName(values.name);
  const permissions = values.permissions.split(',').map((p) => p.trim().toUpperCase());
  const unknown = permissions.filter((p) => !PERMISSIONS.includes(p as Permission));
  if (unknown.length) throw new UsageError(`unknown permission(s): ${unknown.join(', ')} (use ${PERMISSIONS.join(', ')})`);
  const platformId = values.platform;
  const token = await withCorridor(config, async (c) => {
    const platform = await requirePlatform(c, platformId);
    return c.database.db
      .transaction()
      .execute((trx) => c.services.tokens.issue(trx, platform, { name, permissions: permissions as Permission[] }));
  }, { existing: true });
  if (values.json) {
    out(JSON.stringify({ platformId, id: token.id, clientId: token.clientId, tokenId: token.clientId, clientSecret: token.clientSecret }));
    return;
  }
  out(`Client id:      ${token.clientId}`);
  out(`Client secret:  ${token.clientSecret}   (shown once; store it now)`);
}

async function ledgerVerify(config: Config, args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { platform: { type: 'string' }, json: { type: 'boolean', default: false } } });
  return withCorridor(config, async (c) => {
    if (values.platform) await requirePlatform(c, values.platform);
    if (!values.json) out(`Checking the ledger${values.platform ? ` of ${values.platform}` : ''}…`);
    const progress = progressLines();
    // One snapshot for every check: a payment settling between two reads is not a problem.
    const { report, dangling } = await c.database.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        // Its sums group every transfer by account: with PostgreSQL's default 4 MB they spill to
        // disk on a ledger of a million transfers (3.2 s of a 7.9-s check, review at scale).
        await sql`set local work_mem = '64MB'`.execute(trx);
        const report = await c.services.ledger.verify(trx, values.platform, progress);
        progress('holds of finished payments');
        const holders = await c.services.ledger.transactionsWithPendingLegs(trx, values.platform);
        return { report, dangling: await c.services.transactions.terminalAmong(trx, holders) };
      });
    const problems = [
      ...report.problems.map((p) => `${p.platformId} ${p.currency}${p.accountId ? ` account ${p.accountId}` : ''}: ${p.message}`),
      ...dangling.map((t) => `transaction ${t.id} is ${t.status} but still holds funds (pending ledger transfers)`),
    ];
    if (values.json) out(JSON.stringify({ accounts: report.accounts, transfers: report.transfers, problems }));
    else if (problems.length === 0) out(`ledger OK: ${report.accounts} accounts, ${report.transfers} transfers`);
    else {
      for (const line of problems) io.err(`  ✗ ${line}`);
      io.err(`ledger has ${problems.length} problem(s)`);
    }
    return problems.length === 0 ? 0 : 1;
  }, { existing: true });
}

async function verificationList(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { platform: { type: 'string' }, status: { type: 'string', default: 'PENDING_MANUAL_REVIEW' }, json: { type: 'boolean', default: false } } });
  if (!(VERIFICATION_STATES as readonly string[]).includes(values.status)) throw new UsageError(`--status must be one of ${VERIFICATION_STATES.join(', ')}`);
  const status = values.status as VerificationState;
  const page = await withCorridor(config, async (c) => {
    if (values.platform) await requirePlatform(c, values.platform);
    return c.services.compliance.verifications.listAll(values.platform, status);
  }, { existing: true });
  if (values.json) return out(JSON.stringify(page));
  for (const v of page) out(`${v.id}  ${v.customerId}  ${v.verificationStatus}  ${v.createdAt}`);
  out(`${page.length} verification(s) ${status}`);
}

async function verificationResolve(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { id: { type: 'string' }, status: { type: 'string' }, reason: { type: 'string' }, json: { type: 'boolean', default: false } } });
  if (!values.id) throw new UsageError('verification resolve needs --id');
  if (values.status !== 'APPROVED' && values.status !== 'REJECTED') throw new UsageError('verification resolve needs --status APPROVED or REJECTED');
  const decision = values.status;
  const view = await withCorridor(config, (c) => c.services.compliance.verifications.resolve(values.id!, decision, values.reason), { existing: true });
  out(values.json ? JSON.stringify(view) : `${view.id} is ${view.verificationStatus} (customer ${view.customerId})`);
}

export async function runCli(argv: string[], cliIo: Partial<CliIo> = {}): Promise<number> {
  io = { ...io, ...cliIo };
  const [command, sub, ...rest] = argv;
  try {
    if (!command || command === 'help' || argv.includes('--help') || argv.includes('-h')) {
      out(USAGE);
      return command ? 0 : 1;
    }
    const config = loadConfig(io.env);
    if (command === 'start' || command === 'migrate') parseArgs({ args: argv.slice(1), options: {} });
    if (command === 'start') await start(config);
    else if (command === 'migrate') await migrate(config);
    else if (command === 'platform' && sub === 'create') await platformCreate(config, rest);
    else if (command === 'token' && sub === 'create') await tokenCreate(config, rest);
    else if (command === 'ledger' && sub === 'verify') return await ledgerVerify(config, rest);
    else if (command === 'verification' && sub === 'list') await verificationList(config, rest);
    else if (command === 'verification' && sub === 'resolve') await verificationResolve(config, rest);
    else throw new UsageError(`unknown command: ${argv.join(' ')}`);
    return 0;
  } catch (error) {
    if (error instanceof ConfigError) {
      io.err(`configuration error: ${error.message}`);
      return 78;
    }
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`${(error as Error).message}\n\n${USAGE}`);
      return 64;
    }
    io.err(`corridor: ${(error as Error).message}`);
    return 1;
  }
}
