import { createHash } from 'node:crypto';
import { accessSync, constants as fsConstants, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Kysely, PostgresDialect, sql, type CompiledQuery, type Transaction } from 'kysely';
import pg from 'pg';
import { displayConnectionUrl, takeOptions } from './connection-url.js';
import { lockDataDir } from './data-dir-lock.js';
import { PGliteDialect } from './pglite-dialect.js';
import { isStalePlan, plannedPerCall } from './plans.js';
import { parseTimestamptz } from './timestamps.js';
import type { DB } from './schema.js';

export type { DB } from './schema.js';
/** Anything that can run a query: the database or an open transaction. */
export type Executor = Kysely<DB> | Transaction<DB>;
export type Trx = Transaction<DB>;

export interface Database {
  db: Kysely<DB>;
  kind: 'postgres' | 'pglite';
  /**
   * Runs statements in order in one transaction, sent together where the driver allows
   * (PostgreSQL: pipelined, one round trip for all of them and the commit). Atomic: when one
   * fails, none is kept, and its error is thrown.
   */
  runInOneTransaction(statements: CompiledQuery[]): Promise<void>;
  /**
   * Runs one batched write (new rows, rows found by key) where PostgreSQL keeps one plan per
   * statement for all parameter values (see `batchConnections`).
   */
  runBatchedStatement(statement: CompiledQuery): Promise<void>;
  /**
   * Closes the connections. `force` (a shutdown past its limit) ends the PostgreSQL connections
   * still in use too, failing their statements (a request waiting on a lock, say), instead of
   * waiting for them to be handed back.
   */
  close(options?: { force?: boolean }): Promise<void>;
}

// int8 columns hold amounts capped at 9e15 < 2^53, so JavaScript numbers represent them exactly.
pg.types.setTypeParser(20, (value) => Number(value));
pg.types.setTypeParser(1184, parseTimestamptz);

export interface DatabaseOptions {
  databaseUrl?: string;
  dataDir: string;
  poolSize?: number;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.poolSize ?? 10);
  return openPGlite(options.dataDir);
}

const statementNames = new Map<string, string>();

/** A stable name per statement text (hashing every call shows up in profiles; texts are few). */
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (!name) {
    name = `c${createHash('sha1').update(text).digest('base64url')}`;
    if (statementNames.size < 10_000) statementNames.set(text, name);
  }
  return name;
}

/** Distinct statement texts prepared per connection; past this, statements run unnamed. */
const MAX_PREPARED_PER_CONNECTION = 500;

/**
 * Runs parameterized statements as named prepared statements, so PostgreSQL parses and plans
 * each distinct text once per connection instead of on every call (measured: about a third of
 * the database CPU of a list request). The name is a hash of the text, so a name always means
 * the same statement.
 */
function preparedStatements(client: pg.PoolClient): pg.PoolClient {
  const prepared = client as pg.PoolClient & { corridorPrepared?: Map<string, string> };
  if (prepared.corridorPrepared) return client;
  // Statement text → the name it is prepared under on this connection.
  const names = new Map<string, string>();
  prepared.corridorPrepared = names;
  let renamed = 0;
  // The pool listens for errors of idle connections only. A connection lost while in use
  // (PostgreSQL restarted, the backend terminated) fails its queries, and the pool drops it on
  // release; its 'error' event, unheard, would end the process.
  client.on('error', () => {});
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (text: unknown, values?: unknown[]) => {
    if (typeof text !== 'string' || !values || values.length === 0 || plannedPerCall(text)) return query(text, values);
    let name = names.get(text);
    if (!name) {
      if (names.size >= MAX_PREPARED_PER_CONNECTION) return query(text, values);
      names.set(text, (name = statementName(text)));
    }
    return (query({ name, text, values }) as Promise<unknown>).catch((error: unknown) => {
      // A migration changed a table under the prepared statement: this call fails, the next one
      // prepares the text again under a new name, instead of every call failing on this
      // connection for as long as it lives.
      if (isStalePlan(error)) names.set(text, `${statementName(text)}_${++renamed}`);
      throw error;
    });
  };
  return client;
}

/**
 * Connections kept for the write batcher's batches (beside the pool's): it runs at most two at
 * once of each kind (`WriteBatcherOptions.maxInFlight`), transactions and single statements.
 *
 * They plan each statement once for all parameter values (`plan_cache_mode =
 * force_generic_plan`). A batch inserts rows from arrays (`unnest($1::text[])`), which a plan for
 * the actual values costs at their number and the generic plan at ten, so PostgreSQL judged the
 * generic plan dearer and planned the statement anew on every run: 17% of PostgreSQL's CPU under
 * `POST /quotes`, whose batches hold dozens of clauses, 2.5% with this setting (perf, bench run).
 * The writes batched here insert rows and find the rows they check or update by key, so one plan
 * serves every value; the pool's other statements keep PostgreSQL's choice.
 *
 * For the same reason they run with sequential scans off: a generic plan lasts as long as its
 * connection (or until an ANALYZE of its tables), and one made while a table held a page or two
 * scans it, cheaper than its key then, and goes on scanning it as it grows. `auto_explain` showed
 * executions claiming their quote and moving their transaction by sequential scans of both tables
 * in a bench run (plans made after a set-up of a hundred quotes, in a run that adds thousands).
 */
const BATCH_CONNECTIONS = 4;

const GENERIC_PLANS = '-c plan_cache_mode=force_generic_plan -c enable_seqscan=off';

/**
 * Session settings Corridor's statements rely on, whatever the database's or role's defaults
 * (`ALTER DATABASE … SET`, `ALTER ROLE … SET`, postgresql.conf), given as startup options, which
 * outrank those (a setting from the client beats one from the database or role):
 *
 * - `DateStyle` ISO: `timestamptz` text is parsed by position (src/db/timestamps.ts); under
 *   `SQL, DMY`, say, every timestamp read as null. `IntervalStyle` postgres, for the same reason.
 * - `default_transaction_isolation` read committed: the checks made under an advisory lock
 *   (bootstrap, UMA domains, default external accounts) must see rows committed while they
 *   waited for it, which a repeatable read snapshot taken before the lock does not; and under
 *   serializable, concurrent payments failed with serialization errors (40001).
 *
 * The operator's own `options` (in the URL, else PGOPTIONS) come after the defaults below and
 * before these, so they cannot undo them (the last `-c` of a setting wins).
 */
const PINNED_SETTINGS = '-c DateStyle=ISO,\\ MDY -c IntervalStyle=postgres -c default_transaction_isolation=read\\ committed';

/**
 * Defaults the operator may override with the URL's `options` (or its `lock_timeout=` parameter):
 * no lock timeout. Statements wait for the rows they lock (a hot balance under concurrent
 * payments, a platform's configuration); a role's `lock_timeout` of a few milliseconds failed
 * ordinary concurrent writes. `statement_timeout` and `idle_in_transaction_session_timeout` are
 * guards an operator sets on purpose: they are left as the database and role set them, and what
 * they cancel is a 503 (see `isDatabaseUnavailable`).
 */
const DEFAULT_SETTINGS = '-c lock_timeout=0';

/**
 * node-postgres's connection settings for DATABASE_URL (any form it reads, Unix sockets included,
 * see connection-url.ts): the URL, and startup options with the session settings above and
 * `extra`. The URL's own `options` (or PGOPTIONS, which node-postgres reads when the URL gives
 * none) go between Corridor's defaults and its pinned settings; left in the URL, they would
 * replace all of Corridor's.
 */
export function connectionConfig(databaseUrl: string, extra?: string): pg.ClientConfig {
  const { connectionString, options } = takeOptions(databaseUrl);
  const operator = options || process.env.PGOPTIONS;
  return { connectionString, options: [DEFAULT_SETTINGS, operator, PINNED_SETTINGS, extra].filter(Boolean).join(' ') };
}

/** A SQLSTATE: the error came from PostgreSQL, which rolled the transaction back. */
const fromServer = (error: unknown): boolean => typeof (error as PgError)?.code === 'string' && /^[0-9A-Z]{5}$/.test((error as PgError).code!);

/**
 * Runs `send` with the connection's socket corked, so that the statements it pipelines leave in
 * one write: node-postgres corks each extended-protocol statement on its own (and not `begin`
 * or `commit`), which made a batch one system call per statement.
 */
function corked<T>(client: pg.PoolClient, send: () => T): T {
  const { stream } = (client as unknown as { connection: { stream: { cork(): void; uncork(): void } } }).connection;
  stream.cork();
  try {
    return send();
  } finally {
    stream.uncork();
  }
}

const POOL_WAIT_MS = 10_000;

/**
 * A connection's 'error' event, unheard, ends the process. The pool listens while a connection is
 * idle and `preparedStatements` once it is handed out, but a backend terminated just as it
 * finished starting reports its FATAL in between, before `connect()` resolves: so every
 * connection gets a listener as soon as it exists. The failure surfaces on the next query.
 */
function quietPool(pool: pg.Pool): pg.Pool {
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/**
 * Ends a pool. Forced, the connections handed out are ended too: a statement in progress fails
 * (its socket is destroyed), its connection comes back and is removed, and `end()` settles
 * instead of waiting for a lock wait that may last for ever.
 */
function endable(pool: pg.Pool): { end(force?: boolean): Promise<void> } {
  const inUse = new Set<pg.PoolClient>();
  pool.on('acquire', (client) => inUse.add(client));
  pool.on('release', (_err, client) => inUse.delete(client));
  pool.on('remove', (client) => inUse.delete(client as pg.PoolClient));
  return {
    end: (force = false) => {
      const ended = pool.end();
      if (force) for (const client of inUse) void client.end().catch(() => {});
      return ended;
    },
  };
}

/**
 * The batch connections, pipelined. `run` (`runInOneTransaction`) writes BEGIN, the statements and
 * COMMIT at once. After a failed statement PostgreSQL skips the rest (each fails with 25P02) and
 * the COMMIT rolls back, so the first failure is the cause. A failure PostgreSQL did not report
 * (a broken connection) leaves the connection's state unknown: it is discarded.
 */
const CONNECT_FAILED = Symbol('corridor.connectFailed');

/**
 * A connection from the pool, prepared. Whatever PostgreSQL answers when it refuses a new
 * connection (the database closed to connections, 55000; the role not allowed to log in, 28000;
 * too many clients, 53300), the request never reached the database: the failure is marked so that
 * it answers a retryable 503 like the other unavailability codes, never a 500.
 */
async function connectFrom(pool: pg.Pool): Promise<pg.PoolClient> {
  try {
    return preparedStatements(await pool.connect());
  } catch (error) {
    if (error !== null && typeof error === 'object') Object.defineProperty(error, CONNECT_FAILED, { value: true });
    throw error;
  }
}

function batchConnections(connectionString: string) {
  const pool = quietPool(new pg.Pool({ ...connectionConfig(connectionString, GENERIC_PLANS), max: BATCH_CONNECTIONS, pipeline: true }));
  const ending = endable(pool);
  async function sendAll(statements: Array<{ sql: string; parameters?: readonly unknown[] }>): Promise<void> {
    const client = await connectFrom(pool);
    const sent = corked(client, () => statements.map((s) => client.query(s.sql, s.parameters as unknown[] | undefined)));
    const failure = (await Promise.allSettled(sent)).find((outcome) => outcome.status === 'rejected');
    if (!failure) return client.release();
    const error = failure.reason as Error;
    client.release(fromServer(error) ? undefined : error);
    throw error;
  }
  return {
    run: (statements: CompiledQuery[]) => sendAll([{ sql: 'begin' }, ...statements, { sql: 'commit' }]),
    runOne: (statement: CompiledQuery) => sendAll([statement]),
    end: (force?: boolean) => ending.end(force),
  };
}

async function openPostgres(connectionString: string, max: number): Promise<Database> {
  // A request waits at most 10 s for a connection (say, all held by statements waiting on a lock):
  // then it is a 503 the client can retry, not a hang.
  const pool = quietPool(new pg.Pool({ ...connectionConfig(connectionString), max, connectionTimeoutMillis: POOL_WAIT_MS }));
  const ending = endable(pool);
  let force = false;
  // Kysely only calls connect() and end() on the pool.
  const preparingPool = { connect: () => connectFrom(pool), end: () => ending.end(force) } as unknown as pg.Pool;
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: preparingPool }) });
  try {
    await sql`select 1`.execute(db);
  } catch (error) {
    await db.destroy().catch(() => {});
    // "connect ECONNREFUSED 127.0.0.1:5" alone did not say it was the database that was not there.
    throw Object.assign(new Error(`cannot connect to the database at ${displayConnectionUrl(connectionString)} (DATABASE_URL): ${(error as Error).message}`, { cause: error }), {
      code: (error as PgError).code,
    });
  }
  const pipelined = batchConnections(connectionString);
  return {
    db,
    kind: 'postgres',
    runInOneTransaction: pipelined.run,
    runBatchedStatement: pipelined.runOne,
    close: async (options) => {
      force = options?.force ?? false;
      await Promise.all([pipelined.end(force), db.destroy()]);
    },
  };
}

/**
 * PGlite reports a data directory it cannot write only as "PGlite failed to initialize
 * properly". Checked before it opens, the error names the directory: the data directory (the lock
 * file goes there), the database's own and the directories in it.
 */
function checkWritable(location: string): void {
  const problem = (error: unknown) => (error as NodeJS.ErrnoException).code ?? (error as Error).message;
  try {
    mkdirSync(location, { recursive: true });
  } catch (error) {
    throw new Error(`cannot create the embedded database directory ${location} (${problem(error)}): check DATA_DIR`, { cause: error });
  }
  const subdirectories = readdirSync(location, { withFileTypes: true }).filter((entry) => entry.isDirectory());
  for (const dir of [dirname(location), location, ...subdirectories.map((entry) => join(location, entry.name))]) {
    try {
      accessSync(dir, fsConstants.W_OK);
    } catch (error) {
      throw new Error(`the embedded database directory ${dir} cannot be written by this process (${problem(error)}): fix its permissions, or set DATA_DIR to a writable directory`, { cause: error });
    }
  }
}

async function openPGlite(dataDir: string): Promise<Database> {
  const { PGlite } = await import('@electric-sql/pglite');
  const location = dataDir === 'memory' ? undefined : `${dataDir.replace(/\/$/, '')}/pglite`;
  if (location) checkWritable(location);
  const unlock = location ? lockDataDir(location) : () => {};
  // JSON values are always passed as already-serialized strings (what node-postgres sends), so
  // PGlite must not serialize them a second time.
  const passThrough = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));
  let pglite: InstanceType<typeof PGlite>;
  try {
    pglite = new PGlite(location, {
      parsers: { 20: (value: string) => Number(value) },
      serializers: { 114: passThrough, 3802: passThrough },
    });
    await pglite.waitReady;
  } catch (error) {
    unlock();
    throw new Error(`the embedded database in ${location ?? 'memory'} could not be opened: ${(error as Error).message}`, { cause: error });
  }
  const db = new Kysely<DB>({ dialect: new PGliteDialect(pglite) });
  return {
    db,
    kind: 'pglite',
    // One connection in the same process: nothing to pipeline.
    runInOneTransaction: (statements) =>
      db.transaction().execute(async (trx) => {
        for (const statement of statements) await trx.executeQuery(statement);
      }),
    runBatchedStatement: async (statement) => {
      await db.executeQuery(statement);
    },
    close: async () => {
      try {
        await db.destroy();
        await pglite.close();
      } finally {
        unlock();
      }
    },
  };
}

/** Postgres error fields we map to domain errors (the same on pg and PGlite). */
export interface PgError {
  code?: string;
  constraint?: string;
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = error as PgError;
  return e?.code === '23505' && (!constraint || e.constraint === constraint);
}

/**
 * The database could not be reached or went away: a connection refused, lost or terminated (by an
 * administrator, a shutdown, or the operator's `idle_in_transaction_session_timeout` or
 * `idle_session_timeout`), too many connections, or no pooled connection free within the pool's
 * wait. Or it refused this attempt for the moment: a serialization failure (40001), a deadlock
 * (40P01), a lock not granted in time (55P03, the operator's `lock_timeout`), a statement
 * cancelled (57014: `statement_timeout`, `pg_cancel_backend`). Either way the transaction was
 * rolled back and retrying later can succeed, so callers hear 503, not 500. Not 08P01 (protocol
 * violation): that is a bug of ours.
 */
const UNAVAILABLE_CODES: ReadonlySet<string> = new Set([
  '08000', '08001', '08003', '08004', '08006', '53300', '57P01', '57P02', '57P03', '57P05', '25P03',
  '40001', '40P01', '55P03', '57014',
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE',
]);

export function isDatabaseUnavailable(error: unknown): boolean {
  const { code, message } = (error ?? {}) as PgError & { message?: string };
  if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
  if ((error as { [CONNECT_FAILED]?: boolean } | undefined)?.[CONNECT_FAILED]) return true;
  return typeof message === 'string' && /^(timeout exceeded when trying to connect|Connection terminated|Client has encountered a connection error)/.test(message);
}

/** The refusal of `corridor_expect` (a statement whose condition did not hold; nothing was written). */
export function isUnmetExpectation(error: unknown): boolean {
  return (error as PgError)?.code === 'CR001';
}

export function isCheckViolation(error: unknown, constraint?: string): boolean {
  const e = error as PgError;
  return e?.code === '23514' && (!constraint || e.constraint === constraint);
}

/**
 * A LIMIT written into the statement text rather than sent as a parameter. With `limit $n`,
 * PostgreSQL costs a prepared statement's generic plan as if it returned a tenth of the table, so
 * it keeps planning every execution afresh (measured: about half the database time of a list
 * page). Limits are small validated integers, so each statement keeps a handful of texts.
 */
export function literalLimit(n: number) {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`invalid LIMIT ${n}`);
  return sql.lit(n);
}

/** Serializes a value for a json/jsonb column (both drivers receive the same string). */
export function toJson(value: unknown): string {
  return JSON.stringify(value);
}
