// A backend terminated just as it finished starting (pg_terminate_backend, a failover) reports
// FATAL right after its ReadyForQuery, before the pool hands the connection out. A loopback proxy
// in front of PostgreSQL imitates it; the process must survive and the pool recover.
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseKind } from '../../test/support/db.js';
import { isDatabaseUnavailable, openDatabase, type Database } from './database.js';

const READY_FOR_QUERY = Buffer.from([0x5a, 0, 0, 0, 5]);

/** ErrorResponse: FATAL 57P01, as PostgreSQL sends it to a terminated backend's client. */
function terminatedMessage(): Buffer {
  const fields = ['SFATAL', 'VFATAL', 'C57P01', 'Mterminating connection due to administrator command'];
  const body = Buffer.concat([...fields.map((f) => Buffer.from(`${f}\0`)), Buffer.from([0])]);
  const header = Buffer.alloc(5);
  header.write('E');
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

/** Forwards to PostgreSQL; while `terminating`, new connections get FATAL right after starting. */
function startProxy(target: URL) {
  const state = { terminating: false };
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    const terminate = state.terminating;
    let started = false;
    sockets.add(client).add(upstream);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      if (terminate && !started && chunk.includes(READY_FOR_QUERY)) {
        started = true;
        client.end(Buffer.concat([chunk, terminatedMessage()]));
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    upstream.on('end', () => client.end());
  });
  return {
    state,
    listen: () => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port))),
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe.skipIf(testDatabaseKind() !== 'postgres')('a backend terminated as it starts', () => {
  let proxy: ReturnType<typeof startProxy>;
  let database: Database;

  beforeAll(async () => {
    const target = new URL(process.env.TEST_DATABASE_URL!);
    proxy = startProxy(target);
    const port = await proxy.listen();
    const viaProxy = new URL(target);
    viaProxy.host = `127.0.0.1:${port}`;
    database = await openDatabase({ databaseUrl: viaProxy.toString(), dataDir: 'memory', poolSize: 4 });
  });
  afterAll(async () => {
    await database?.close();
    await proxy?.close();
  });

  it('fails the queries that needed a new connection, not the process, and the pool recovers', async () => {
    proxy.state.terminating = true;
    // Four at once: the pool opens new connections, each terminated as it starts.
    const outcomes = await Promise.allSettled(Array.from({ length: 4 }, () => sql`select pg_sleep(0.05)`.execute(database.db)));
    const failures = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(failures.length).toBeGreaterThan(0);
    // What the API then answers 503 SERVICE_UNAVAILABLE for, not 500.
    for (const failure of failures) expect(isDatabaseUnavailable(failure.reason), String(failure.reason)).toBe(true);
    // An unheard 'error' event would have ended the process by now; give it the chance.
    await new Promise((resolve) => setTimeout(resolve, 200));
    proxy.state.terminating = false;
    const { rows } = await sql<{ one: number }>`select 1 as one`.execute(database.db);
    expect(rows).toEqual([{ one: 1 }]);
  });
});

describe('isDatabaseUnavailable', () => {
  it('tells a database that is away from a statement that failed', () => {
    for (const error of [{ code: '57P01' }, { code: '08006' }, { code: 'ECONNREFUSED' }, new Error('timeout exceeded when trying to connect'), new Error('Connection terminated unexpectedly')]) {
      expect(isDatabaseUnavailable(error), JSON.stringify(error)).toBe(true);
    }
    for (const error of [{ code: '23505' }, { code: '23514' }, { code: '08P01' }, { code: '42P01' }, new Error('boom'), undefined]) expect(isDatabaseUnavailable(error)).toBe(false);
    expect(isDatabaseUnavailable({ code: '53300' })).toBe(true);
  });

  it('counts what a retry can get past as unavailable: serialization failures, deadlocks, lock and statement timeouts, idle sessions ended', () => {
    // 40001 serialization_failure, 40P01 deadlock_detected, 55P03 lock_not_available (lock_timeout),
    // 57014 query_canceled (statement_timeout), 25P03 idle_in_transaction_session_timeout, 57P05 idle_session_timeout.
    for (const code of ['40001', '40P01', '55P03', '57014', '25P03', '57P05']) expect(isDatabaseUnavailable({ code }), code).toBe(true);
  });
});
