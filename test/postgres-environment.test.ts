// Corridor on a PostgreSQL database whose operator changed the session defaults Corridor relies on
// (ALTER DATABASE … SET, as an ALTER ROLE would): a non-ISO DateStyle, serializable transactions,
// a lock timeout of a few milliseconds. Corridor pins its own settings as startup options on both
// of its pools, keeps the operator's URL options, and answers 503 for what a statement timeout
// cancels. Also: a Unix-socket DATABASE_URL, for real. PostgreSQL only (TEST_DATABASE_URL): the
// settings are the server's.
import { existsSync } from 'node:fs';
import { Writable } from 'node:stream';
import { CompiledQuery, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlatformWithToken } from '../src/bootstrap.js';
import { loadConfig } from '../src/config.js';
import { createCorridor, type Corridor } from '../src/corridor.js';
import { openDatabase } from '../src/db/database.js';
import { apiClient, testConfig, type ApiClient } from './support/app.js';
import { testDatabaseKind } from './support/db.js';

const onPostgres = testDatabaseKind() === 'postgres';

/** A database beside this worker's (global-setup.ts drops what is left of it at the end of the run). */
function scratchDatabase(suffix: string) {
  const base = new URL(process.env.TEST_DATABASE_URL!);
  const worker = process.env.VITEST_POOL_ID ?? process.env.VITEST_WORKER_ID ?? '0';
  const name = `${base.pathname.slice(1) || 'test'}_${process.ppid}_w${worker}_${suffix}`;
  const url = new URL(base);
  url.pathname = `/${name}`;
  const admin = async <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: base.toString() });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };
  return {
    name,
    url,
    admin,
    create: (...settings: string[]) =>
      admin(async (client) => {
        await client.query(`drop database if exists "${name}" with (force)`);
        await client.query(`create database "${name}"`);
        for (const setting of settings) await client.query(`alter database "${name}" set ${setting}`);
      }),
    drop: () => admin((client) => client.query(`drop database if exists "${name}" with (force)`)),
  };
}

/** The session settings Corridor pins, as `SHOW` reports them, read in a transaction. */
const SETTINGS = `current_setting('DateStyle') || ' / ' || current_setting('IntervalStyle') || ' / ' || current_setting('transaction_isolation') || ' / ' || current_setting('lock_timeout')`;
const PINNED = 'ISO, MDY / postgres / read committed / 0';

/** A statement for the batch connections (which return no rows): fails naming the settings unless they are `expected`. */
function expectSettings(expected: string, extra = ''): CompiledQuery {
  return CompiledQuery.raw(`do $$ begin
      if ${SETTINGS}${extra} <> '${expected}' then raise exception 'batch connection settings: %', ${SETTINGS}${extra}; end if;
    end $$`);
}

describe.skipIf(!onPostgres)('on a database with other session defaults (PostgreSQL only: runs with TEST_DATABASE_URL)', () => {
  const scratch = onPostgres ? scratchDatabase('environment') : undefined!;
  let corridor: Corridor;
  let api: ApiClient;
  let platformId: string;
  let credentials: { clientId: string; clientSecret: string };
  const asAdmin = (statement: string) => scratch.admin((client) => client.query(statement));
  const logs: string[] = [];

  beforeAll(async () => {
    await scratch.create(`datestyle = 'SQL, DMY'`, `intervalstyle = 'sql_standard'`, `default_transaction_isolation = 'serializable'`, `lock_timeout = '5ms'`);
    // The operator's own options in the URL: kept beside Corridor's.
    const url = new URL(scratch.url);
    url.searchParams.set('options', '-c statement_timeout=60s -c application_name=corridor-env-test');
    const sink = new Writable({
      write(chunk, _enc, done) {
        logs.push(chunk.toString());
        done();
      },
    });
    // The real start-up: opens the database from DATABASE_URL and migrates it.
    corridor = await createCorridor({ config: testConfig({ databaseUrl: url.toString(), runWorkers: false }), logDestination: sink });
    await corridor.app.ready();
    const { platform, token } = await createPlatformWithToken(corridor.services, { name: 'Environment', mode: 'SANDBOX', isRegulatedFinancialInstitution: true }, corridor.database);
    platformId = platform.id;
    credentials = { clientId: token.clientId, clientSecret: token.clientSecret! };
    api = apiClient(corridor, credentials);
  });
  afterAll(async () => {
    await corridor?.close();
    await scratch?.drop();
  });

  it('pins DateStyle, IntervalStyle, read committed and no lock timeout on both pools, keeping the URL options', async () => {
    const { database } = corridor;
    const read = await database.db.transaction().execute((trx) => sql<{ settings: string; operator: string }>`select ${sql.raw(SETTINGS)} as settings, current_setting('statement_timeout') || ' / ' || current_setting('application_name') as operator`.execute(trx));
    expect(read.rows[0]).toEqual({ settings: PINNED, operator: '1min / corridor-env-test' });
    // The batch connections: one statement alone, and statements in one transaction.
    const operator = ` || ' / ' || current_setting('statement_timeout') || ' / ' || current_setting('plan_cache_mode')`;
    await database.runBatchedStatement(expectSettings(`${PINNED} / 1min / force_generic_plan`, operator));
    await database.runInOneTransaction([expectSettings(`${PINNED} / 1min / force_generic_plan`, operator)]);
  });

  it('reads the timestamps it wrote, through the API', async () => {
    const before = Date.now();
    const created = await api.post('/customers', { customerType: 'INDIVIDUAL', fullName: 'Dmy Datestyle', currencies: ['USD'] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const read = await api.get(`/customers/${created.body.id}`);
    expect(read.status, JSON.stringify(read.body)).toBe(200);
    const createdAt = Date.parse(read.body.createdAt);
    expect(createdAt).toBeGreaterThanOrEqual(before - 60_000);
    expect(createdAt).toBeLessThanOrEqual(Date.now() + 60_000);
    expect(read.body.createdAt).toBe(created.body.createdAt);
  });

  it('waits for row locks past the database’s lock_timeout, and concurrent payments from one balance all go through', async () => {
    // A platform's configuration row held for 300 ms by another transaction: the update waits.
    const holder = new pg.Client({ connectionString: scratch.url.toString() });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('select 1 from platforms where id = $1 for update', [platformId]);
      const waiting = api.patch('/config', { proxyUmaSubdomain: 'held' });
      await new Promise((resolve) => setTimeout(resolve, 300));
      await holder.query('commit');
      const updated = await waiting;
      expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    } finally {
      await holder.end();
    }

    const customer = await api.post('/customers', { customerType: 'INDIVIDUAL', fullName: 'Many Payments', currencies: ['USD'] });
    const accounts = await api.get('/customers/internal-accounts', { customerId: customer.body.id, currency: 'USD', type: 'INTERNAL_FIAT' });
    const account = accounts.body.data[0].id;
    expect((await api.post(`/sandbox/internal-accounts/${account}/fund`, { amount: 100_000 })).status).toBe(200);
    const bank = await api.post('/customers/external-accounts', {
      customerId: customer.body.id,
      currency: 'USD',
      accountInfo: { accountType: 'USD_ACCOUNT', accountNumber: '123456001', routingNumber: '021000021', beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Many Payments' } },
    });
    expect(bank.status, JSON.stringify(bank.body)).toBe(201);
    // Under serializable, some of these failed with 40001 (and under a 5 ms lock_timeout, 55P03).
    const outs = await Promise.all(Array.from({ length: 40 }, () => api.post('/transfer-out', { source: { accountId: account }, destination: { accountId: bank.body.id }, amount: 100 })));
    expect(outs.map((o) => o.status).filter((s) => s >= 300)).toEqual([]);
    // And concurrent updates of one row.
    const patches = await Promise.all(Array.from({ length: 10 }, (_, i) => api.patch('/config', { proxyUmaSubdomain: `p${i}` })));
    expect(patches.map((p) => p.status)).toEqual(patches.map(() => 200));
  });

  it('answers 503, not 500, while the database refuses new connections', async () => {
    await asAdmin(`alter database "${scratch.name}" allow_connections false`);
    try {
      await asAdmin(`select pg_terminate_backend(pid) from pg_stat_activity where datname = '${scratch.name}'`);
      await new Promise((resolve) => setTimeout(resolve, 200)); // the pool drops the terminated connections
      for (let i = 0; i < 3; i++) {
        const refused = await api.get('/customers', { limit: 1 });
        expect(refused.status, JSON.stringify(refused.body)).toBe(503);
        expect(refused.body.code).toBe('SERVICE_UNAVAILABLE');
      }
    } finally {
      await asAdmin(`alter database "${scratch.name}" allow_connections true`);
    }
    expect((await api.get('/customers', { limit: 1 })).status).toBe(200);
  });

  it('leaves the database’s statement_timeout in force, and answers 503 for a statement it cancelled', async () => {
    await asAdmin(`alter database "${scratch.name}" set statement_timeout = '1s'`);
    const sink = new Writable({
      write(chunk, _enc, done) {
        logs.push(chunk.toString());
        done();
      },
    });
    const second = await createCorridor({ config: testConfig({ databaseUrl: scratch.url.toString(), runWorkers: false }), logDestination: sink });
    const holder = new pg.Client({ connectionString: scratch.url.toString() });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('select 1 from platforms where id = $1 for update', [platformId]);
      // The update waits for the row longer than the database's statement_timeout: 57014.
      const cancelled = await apiClient(second, credentials).patch('/config', { proxyUmaSubdomain: 'late' });
      expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(503);
      expect(cancelled.body).toEqual({ status: 503, code: 'SERVICE_UNAVAILABLE', message: 'the database is unavailable or busy; retry in a moment' });
      expect(logs.some((line) => line.includes('canceling statement due to statement timeout'))).toBe(true);
    } finally {
      await holder.query('rollback');
      await holder.end();
      await second.close();
    }
  });
});

/** The directory of the server's Unix socket, when this process can reach it. */
async function socketDirectory(): Promise<string | undefined> {
  if (!onPostgres) return undefined;
  const base = new URL(process.env.TEST_DATABASE_URL!);
  const client = new pg.Client({ connectionString: base.toString() });
  await client.connect();
  try {
    const { rows } = await client.query<{ dirs: string; port: string }>(`select current_setting('unix_socket_directories') as dirs, current_setting('port') as port`);
    return rows[0].dirs
      .split(',')
      .map((dir) => dir.trim())
      .find((dir) => dir.startsWith('/') && existsSync(`${dir}/.s.PGSQL.${rows[0].port}`));
  } finally {
    await client.end();
  }
}

const socketDir = await socketDirectory();

describe.skipIf(!socketDir)('a Unix-socket DATABASE_URL (PostgreSQL with a socket this process can reach)', () => {
  const base = onPostgres ? new URL(process.env.TEST_DATABASE_URL!) : undefined;
  const user = base ? decodeURIComponent(base.username) || 'postgres' : '';
  const db = base?.pathname.slice(1) || 'test';
  it.each([
    ['user@ and no host', `postgres://${user}@/${db}?host=${socketDir}`],
    ['no host, user as a parameter', `postgresql:///${db}?host=${socketDir}&user=${user}`],
    ['socket:', `socket://${user}@${socketDir}?db=${db}`],
    ['with the operator’s options', `postgres://${user}@/${db}?host=${socketDir}&options=-c%20application_name%3Dcorridor-socket`],
  ])('is accepted and opens both pools: %s', async (_form, url) => {
    expect(loadConfig({ DATABASE_URL: url }).databaseUrl).toBe(url);
    const database = await openDatabase({ databaseUrl: url, dataDir: 'memory', poolSize: 1 });
    const application = url.includes('application_name') ? 'corridor-socket' : '';
    try {
      const { rows } = await sql<{ socket: boolean; settings: string }>`select inet_server_addr() is null as socket, ${sql.raw(SETTINGS)} as settings`.execute(database.db);
      expect(rows).toEqual([{ socket: true, settings: PINNED }]);
      await database.runBatchedStatement(expectSettings(`${PINNED} / ${application}`, ` || ' / ' || current_setting('application_name')`));
    } finally {
      await database.close();
    }
  });
});
