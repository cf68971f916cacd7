// How `corridor start` stops: bounded by SHUTDOWN_TIMEOUT_MS, a second signal exits at once,
// SIGHUP stops it like SIGTERM, a failed close still exits (and frees PGlite's lock file).
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createPlatformWithToken } from '../src/bootstrap.js';
import { CLOSE_GRACE_MS, EXIT_SHUTDOWN_CUT_OFF, REPEATED_SIGNAL_MS, stopOnSignals } from '../src/cli/commands.js';
import { createCorridor } from '../src/corridor.js';
import { openDatabase } from '../src/db/database.js';
import { basicAuth, testConfig } from './support/app.js';
import { sharedTestDatabase } from './support/db.js';
import { ensureBuilt, killServer, ROOT, serverDatabaseEnv, startServerProcess, workerDatabaseUrl, type ServerProcess } from './support/server-process.js';

const TOKEN_ID = `shutdown-${randomBytes(4).toString('hex')}`;
const SECRET = randomBytes(24).toString('hex');

const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  for (const fn of cleanups.reverse()) await fn();
});

let database: Awaited<ReturnType<typeof serverDatabaseEnv>> | undefined;
/** One database for every server of this file (PGlite's lock passes from one to the next). */
async function start(env: Record<string, string> = {}): Promise<ServerProcess> {
  ensureBuilt();
  if (!database) {
    database = await serverDatabaseEnv();
    cleanups.push(database.cleanup);
  }
  const server = await startServerProcess({ ...database.env, SERVICE_SANDBOX_TOKEN_ID: TOKEN_ID, SERVICE_SANDBOX_CLIENT_SECRET: SECRET, ...env });
  cleanups.push(() => killServer(server));
  return server;
}

/** A client that sends a request's headers, then its body one byte a second: a request in flight for as long as it likes. */
function slowPost(server: ServerProcess): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, '127.0.0.1', () => {
      const auth = Buffer.from(`${TOKEN_ID}:${SECRET}`).toString('base64');
      socket.write(`POST /2025-10-13/customers HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic ${auth}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`);
      const dribble = setInterval(() => socket.write(' '), 1_000);
      socket.on('close', () => clearInterval(dribble));
      resolve(socket);
    });
    socket.on('error', () => {}); // the server closing it is the point
    socket.once('error', reject);
    cleanups.push(() => socket.destroy());
  });
}

describe('corridor start: stopping', () => {
  it('a client sending its body slowly holds the shutdown only until SHUTDOWN_TIMEOUT_MS, with progress logged; the exit code says work was cut off', async () => {
    const server = await start({ SHUTDOWN_TIMEOUT_MS: '1500' });
    const client = await slowPost(server);
    const clientClosed = new Promise((resolve) => client.once('close', resolve));
    await new Promise((r) => setTimeout(r, 300)); // the request is in flight
    const signalledAt = Date.now();
    server.child.kill('SIGTERM');
    const exit = await server.exited;
    const tookMs = Date.now() - signalledAt;
    // Not 0: the request in flight was given up on, and a supervisor should be able to tell.
    expect(EXIT_SHUTDOWN_CUT_OFF).toBe(75);
    expect(exit).toEqual({ code: EXIT_SHUTDOWN_CUT_OFF, signal: null });
    expect(tookMs).toBeGreaterThanOrEqual(1_400);
    expect(tookMs).toBeLessThan(1_500 + 3_000);
    await clientClosed;
    const output = server.output();
    expect(output).toMatch(/"requestsInFlight":1,"connections":1,.*"msg":"shutting down: waiting for requests in flight"/);
    expect(output).toContain('shutdown limit (SHUTDOWN_TIMEOUT_MS) reached: closing the connections still open');
    expect(output).toContain('corridor: the shutdown reached SHUTDOWN_TIMEOUT_MS (1500 ms) and cut off work in flight: exiting with code 75');
  });

  it('a shutdown that finishes what was in flight within the limit exits 0', async () => {
    const server = await start({ SHUTDOWN_TIMEOUT_MS: '10000' });
    // A request in flight when the signal comes: its body's last byte is sent only afterwards.
    const client = await new Promise<Socket>((resolve, reject) => {
      const socket = connect(server.port, '127.0.0.1', () => resolve(socket));
      socket.once('error', reject);
      cleanups.push(() => socket.destroy());
    });
    let answer = '';
    client.on('data', (chunk) => (answer += chunk));
    const auth = Buffer.from(`${TOKEN_ID}:${SECRET}`).toString('base64');
    client.write(`POST /2025-10-13/customers HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic ${auth}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{`);
    await new Promise((r) => setTimeout(r, 300));
    server.child.kill('SIGTERM');
    await server.waitForOutput(/"requestsInFlight":1,.*"msg":"shutting down: waiting for requests in flight"/);
    const answeredAt = Date.now();
    client.write('}');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    // The connection, kept alive, was closed once its request was answered: it did not hold the shutdown to its limit.
    expect(Date.now() - answeredAt).toBeLessThan(5_000);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /); // answered (a customer needs fields), not cut off
    expect(server.output()).not.toContain('cut off work in flight');
  });

  it('a second signal while draining exits at once with 128 + its number, saying so', async () => {
    const server = await start({ SHUTDOWN_TIMEOUT_MS: '60000' });
    await slowPost(server);
    await new Promise((r) => setTimeout(r, 300));
    server.child.kill('SIGTERM');
    await server.waitForOutput(/"msg":"shutting down: waiting up to 60000 ms/);
    await new Promise((r) => setTimeout(r, REPEATED_SIGNAL_MS));
    const signalledAt = Date.now();
    server.child.kill('SIGINT');
    expect(await server.exited).toEqual({ code: 130, signal: null });
    expect(Date.now() - signalledAt).toBeLessThan(2_000);
    expect(server.output()).toContain('corridor: SIGINT while shutting down: exiting now (code 130)');
  });

  it('SIGHUP stops it gracefully, like SIGTERM', async () => {
    const server = await start();
    server.child.kill('SIGHUP');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.output()).toMatch(/"signal":"SIGHUP".*"msg":"shutting down/);
  });
});

describe('npm start', () => {
  /** Whether any process of the group still runs. */
  const groupAlive = (pgid: number) => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  };

  it('SIGTERM to the npm process stops the server too, instead of leaving it running', async () => {
    ensureBuilt();
    if (!database) {
      database = await serverDatabaseEnv();
      cleanups.push(database.cleanup);
    }
    // Its own process group, so that whatever it leaves behind can be found (and killed) afterwards.
    const server = await startServerProcess(
      { ...database.env, SERVICE_SANDBOX_TOKEN_ID: TOKEN_ID, SERVICE_SANDBOX_CLIENT_SECRET: SECRET, npm_config_update_notifier: 'false' },
      { command: ['npm', 'start'], spawn: { detached: true } },
    );
    const pgid = server.child.pid!;
    cleanups.push(() => {
      if (groupAlive(pgid)) process.kill(-pgid, 'SIGKILL');
    });
    server.child.kill('SIGTERM');
    await server.exited;
    const deadline = Date.now() + 15_000;
    while (groupAlive(pgid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(groupAlive(pgid), 'a process of `npm start` outlived npm').toBe(false);
    expect(await fetch(`${server.origin}/healthz`).then(() => 'answering', () => 'down')).toBe('down');
    expect(server.output()).toMatch(/"signal":"SIGTERM".*"msg":"shutting down/);
  });
});

describe('stopOnSignals', () => {
  function harness(close: () => Promise<{ cutOff: boolean }>, shutdownTimeoutMs = 1_000) {
    const proc = Object.assign(new EventEmitter(), { exit: vi.fn() });
    const log = { info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    stopOnSignals({ close, log: log as never, config: { shutdownTimeoutMs } as never }, proc as never);
    return { proc, log };
  }

  it('a close that fails is logged and exits 1, not an unhandled rejection', async () => {
    const unhandled = vi.fn();
    process.on('unhandledRejection', unhandled);
    try {
      const { proc, log } = harness(() => Promise.reject(new Error('pool would not end')));
      proc.emit('SIGTERM');
      await vi.waitFor(() => expect(proc.exit).toHaveBeenCalledWith(1));
      expect(log.error).toHaveBeenCalledWith({ err: expect.objectContaining({ message: 'pool would not end' }) }, 'shutdown failed');
      await new Promise((r) => setTimeout(r, 10));
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
    }
  });

  it('a close that finished cleanly exits 0; one that cut work off at the limit exits EXIT_SHUTDOWN_CUT_OFF, saying so', async () => {
    for (const [cutOff, code] of [[false, 0], [true, EXIT_SHUTDOWN_CUT_OFF]] as const) {
      const { proc, log } = harness(() => Promise.resolve({ cutOff }));
      proc.emit('SIGTERM');
      await vi.waitFor(() => expect(proc.exit).toHaveBeenCalledWith(code));
      expect(proc.exit).toHaveBeenCalledTimes(1);
      if (cutOff) expect(log.warn).toHaveBeenCalledWith(expect.objectContaining({ code }), expect.stringContaining('cut off'));
      else expect(log.warn).not.toHaveBeenCalled();
    }
  });

  it('a close that hangs past the limit exits 1 once the grace after it is over', async () => {
    vi.useFakeTimers();
    try {
      const { proc, log } = harness(() => new Promise(() => {}), 2_000);
      proc.emit('SIGHUP');
      await vi.advanceTimersByTimeAsync(2_000 + CLOSE_GRACE_MS - 1);
      expect(proc.exit).not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(1);
      expect(proc.exit).toHaveBeenCalledWith(1);
      expect(log.error).toHaveBeenCalledWith(expect.anything(), 'shutdown did not finish in time: exiting anyway');
    } finally {
      vi.useRealTimers();
    }
  });

  it('each of SIGINT, SIGTERM and SIGHUP starts the shutdown; the next one exits at once', async () => {
    vi.useFakeTimers();
    try {
      for (const [first, second, code] of [['SIGINT', 'SIGTERM', 143], ['SIGTERM', 'SIGHUP', 129], ['SIGHUP', 'SIGINT', 130]] as const) {
        const close = vi.fn(() => new Promise<{ cutOff: boolean }>(() => {}));
        const { proc } = harness(close);
        proc.emit(first);
        expect(close).toHaveBeenCalledTimes(1);
        expect(proc.exit).not.toHaveBeenCalled();
        await vi.advanceTimersByTimeAsync(REPEATED_SIGNAL_MS);
        proc.emit(second);
        expect(proc.exit).toHaveBeenCalledWith(code);
        expect(close).toHaveBeenCalledTimes(1);
      }
    } finally {
      vi.useRealTimers();
    }
  });

  it('the same signal twice at once is one request (Ctrl-C under npm start: from the terminal and from npm)', async () => {
    vi.useFakeTimers();
    try {
      const close = vi.fn(() => new Promise<{ cutOff: boolean }>(() => {}));
      const { proc } = harness(close, 60_000);
      proc.emit('SIGINT');
      await vi.advanceTimersByTimeAsync(20);
      proc.emit('SIGINT');
      expect(proc.exit).not.toHaveBeenCalled();
      expect(close).toHaveBeenCalledTimes(1);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('PGlite lock file', () => {
  /** A data directory, and a script that opens its database (taking the lock), says `locked`, then runs `then`. */
  async function lockingScript(then: string) {
    ensureBuilt();
    const { dataDir, cleanup } = await serverDatabaseEnv();
    cleanups.push(cleanup);
    const script = `
      const { openDatabase } = await import(${JSON.stringify(join(ROOT, 'dist/db/database.js'))});
      await openDatabase({ dataDir: ${JSON.stringify(dataDir)} });
      console.log('locked');
      ${then}`;
    return { dataDir, args: ['--input-type=module', '-e', script] };
  }

  it('goes when the process exits without closing the database (a failed shutdown, a second signal)', async () => {
    const { dataDir, args } = await lockingScript('process.exit(3);');
    const run = spawnSync(process.execPath, args, { encoding: 'utf8' });
    expect(run.stdout).toContain('locked');
    expect(run.status).toBe(3);
    expect(existsSync(join(dataDir, 'pglite'))).toBe(true);
    expect(existsSync(join(dataDir, 'pglite.lock'))).toBe(false);
  });

  it('goes when a stop signal arrives before anything handles it (a command at work, a server starting)', async () => {
    const { dataDir, args } = await lockingScript('setInterval(() => {}, 1000);');
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve) => child.stdout.on('data', (chunk) => String(chunk).includes('locked') && resolve()));
    expect(existsSync(join(dataDir, 'pglite.lock'))).toBe(true);
    child.kill('SIGTERM');
    const code = await new Promise((resolve) => child.on('exit', (status, signal) => resolve(status ?? signal)));
    expect(code).toBe(143);
    expect(existsSync(join(dataDir, 'pglite.lock'))).toBe(false);
  });
});

describe.runIf(process.env.TEST_DATABASE_URL)('Corridor.close on PostgreSQL', () => {
  it('a request waiting on a lock is cut off at the limit, and the pool closes anyway', async () => {
    await sharedTestDatabase();
    const corridor = await createCorridor({ config: testConfig({ databaseUrl: workerDatabaseUrl(), shutdownTimeoutMs: 500 }), logger: false });
    const { token } = await createPlatformWithToken(corridor.services, { name: 'Locked', mode: 'SANDBOX', isRegulatedFinancialInstitution: false }, corridor.database);
    await corridor.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = corridor.app.server.address() as { port: number };
    // Another process holds the customers table: the request's read waits for as long as it does.
    const holder = await openDatabase({ databaseUrl: workerDatabaseUrl(), dataDir: 'memory', poolSize: 1 });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holding = holder.db.transaction().execute(async (trx) => {
      await sql`lock table customers in access exclusive mode`.execute(trx);
      locked();
      await held;
    });
    try {
      await isLocked;
      const request = fetch(`http://127.0.0.1:${port}/2025-10-13/customers`, { headers: { authorization: basicAuth({ clientId: token.clientId, clientSecret: token.clientSecret! }) } }).then((r) => r.status, () => 'cut off');
      await new Promise((r) => setTimeout(r, 300));
      const closing = Date.now();
      const closed = corridor.close().then(({ cutOff }) => (cutOff ? 'closed, the request cut off' : 'closed'));
      const outcome = await Promise.race([closed, new Promise((r) => setTimeout(() => r('still closing'), 5_000))]);
      expect(outcome).toBe('closed, the request cut off');
      expect(Date.now() - closing).toBeLessThan(3_000);
      expect(await request).toBe('cut off');
    } finally {
      release();
      await holding;
      await holder.close();
      await corridor.close();
    }
  });
});
