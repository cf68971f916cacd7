// A real server process killed with SIGKILL in the middle of a load of transfers, then restarted
// on the same database: the ledger still verifies, no hold is left dangling and every accepted
// transfer reaches the outcome its sandbox suffix promises.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../src/db/database.js';
import { transactionsWithPendingLegs } from '../src/modules/ledger/transfers.js';
import { verifyLedger } from '../src/modules/ledger/verify.js';
import { terminalAmong } from '../src/modules/transactions/repository.js';
import { sharedTestDatabase } from './support/db.js';
import { ensureBuilt, freePort } from './support/server-process.js';
import { ADDRESS, PDF } from './support/verification.js';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const CLI = join(ROOT, 'dist/cli.js');
const TOKEN_ID = `crash-${randomBytes(4).toString('hex')}`;
const SECRET = randomBytes(24).toString('hex');
const AUTH = `Basic ${Buffer.from(`${TOKEN_ID}:${SECRET}`).toString('base64')}`;
const TRANSFERS = 400;
const KILL_AFTER = 120;
const CONCURRENCY = 16;
const AMOUNT = 100;
/** Sandbox suffix → the final status and failure detail it leads to. */
const OUTCOMES: Record<string, { status: string; detail?: string }> = {
  '001': { status: 'COMPLETED' },
  '002': { status: 'FAILED', detail: 'INSUFFICIENT_FUNDS' },
  '003': { status: 'FAILED', detail: 'ACCOUNT_CLOSED' },
  '004': { status: 'FAILED', detail: 'BANK_REJECTED' },
  '005': { status: 'FAILED', detail: 'TIMEOUT' },
};
// Mostly successes, so most of the load holds and then posts money.
const MIX = ['001', '001', '001', '002', '003', '004', '005', '001'];

const cleanups: Array<() => void | Promise<void>> = [];
afterAll(async () => {
  for (const fn of cleanups.reverse()) await fn();
});

/** Where the server keeps its data: this worker's PostgreSQL database, or a fresh PGlite directory. */
function databaseTarget(): { env: Record<string, string>; open: () => Promise<{ database: Database; close: () => Promise<void> }> } {
  // Files (documents) live under DATA_DIR on PostgreSQL too: never the checkout's ./data.
  const dir = mkdtempSync(join(tmpdir(), 'corridor-crash-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  if (process.env.TEST_DATABASE_URL) {
    const url = new URL(process.env.TEST_DATABASE_URL);
    const worker = process.env.VITEST_POOL_ID ?? process.env.VITEST_WORKER_ID ?? '0';
    url.pathname = `/${url.pathname.slice(1) || 'test'}_${process.ppid}_w${worker}`;
    return { env: { DATABASE_URL: url.toString(), DATA_DIR: dir }, open: async () => ({ database: await sharedTestDatabase(), close: async () => {} }) };
  }
  return {
    env: { DATA_DIR: dir },
    open: async () => {
      const database = await openDatabase({ dataDir: dir });
      return { database, close: () => database.close() };
    },
  };
}

interface Server {
  origin: string;
  child: ChildProcess;
  exited: Promise<void>;
  output: string[];
}

async function startServer(databaseEnv: Record<string, string>): Promise<Server> {
  const port = await freePort();
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    SERVICE_SANDBOX_TOKEN_ID: TOKEN_ID,
    SERVICE_SANDBOX_CLIENT_SECRET: SECRET,
    ...databaseEnv,
  };
  const child = spawn(process.execPath, [CLI, 'start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  child.stdout!.on('data', (chunk) => output.push(String(chunk)));
  child.stderr!.on('data', (chunk) => output.push(String(chunk)));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  cleanups.push(() => void child.kill('SIGKILL'));
  const origin = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`server exited early:\n${output.join('')}`);
    const up = await fetch(`${origin}/healthz`).then((r) => r.ok, () => false);
    if (up) return { origin, child, exited, output };
    if (i > 600) throw new Error(`server did not start:\n${output.join('')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function call(server: Server, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.origin}/2025-10-13${path}`, {
    method,
    headers: { authorization: AUTH, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** The start-up sandbox platform is not a regulated institution: its customers send once verified. */
async function verify(server: Server, customerId: string): Promise<void> {
  const form = new FormData();
  for (const [name, value] of Object.entries({ documentHolder: customerId, documentType: 'PASSPORT', country: 'US' })) form.set(name, value);
  form.set('file', new Blob([PDF], { type: 'application/pdf' }), 'passport.pdf');
  const document = await fetch(`${server.origin}/2025-10-13/documents`, { method: 'POST', headers: { authorization: AUTH }, body: form });
  expect(document.status).toBe(201);
  expect((await call(server, 'POST', '/verifications', { customerId })).body.verificationStatus).toBe('APPROVED');
}

async function setUp(server: Server) {
  const customer = await call(server, 'POST', '/customers', { customerType: 'INDIVIDUAL', fullName: 'Crash Test', region: 'US', birthDate: '1985-06-30', address: ADDRESS });
  expect(customer.status).toBe(201);
  await verify(server, customer.body.id);
  const usd = (await call(server, 'GET', `/customers/internal-accounts?customerId=${encodeURIComponent(customer.body.id)}&currency=USD`)).body.data[0].id as string;
  expect((await call(server, 'POST', `/sandbox/internal-accounts/${usd}/fund`, { amount: TRANSFERS * AMOUNT })).status).toBe(200);
  const externals: Record<string, string> = {};
  for (const suffix of Object.keys(OUTCOMES)) {
    const res = await call(server, 'POST', '/customers/external-accounts', {
      customerId: customer.body.id,
      currency: 'USD',
      accountInfo: {
        accountType: 'USD_ACCOUNT',
        accountNumber: `${randomBytes(3).readUIntBE(0, 3)}${suffix}`,
        routingNumber: '021000021',
        beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Crash Test', birthDate: '1985-06-30', nationality: 'US' },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    externals[suffix] = res.body.id;
  }
  return { usd, externals };
}

/** Fires the transfers; SIGKILLs the server once KILL_AFTER have been answered. Returns the accepted ones. */
async function loadAndKill(server: Server, usd: string, externals: Record<string, string>) {
  const accepted = new Map<string, string>(); // transaction id → suffix
  let next = 0;
  let answered = 0;
  let killed = false;
  async function worker() {
    while (next < TRANSFERS) {
      const suffix = MIX[next++ % MIX.length];
      try {
        const res = await call(server, 'POST', '/transfer-out', { source: { accountId: usd }, destination: { accountId: externals[suffix] }, amount: AMOUNT });
        if (res.status === 201) accepted.set(res.body.id, suffix);
        else throw new Error(`transfer refused: ${res.status} ${JSON.stringify(res.body)}`);
      } catch (error) {
        if (!killed) throw error;
      }
      if (++answered === KILL_AFTER) killed = server.child.kill('SIGKILL');
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  await server.exited;
  return accepted;
}

describe('SIGKILL in the middle of a load of transfer-outs', () => {
  it('restarts with a verified ledger, no dangling hold, and every outcome delivered', { timeout: 300_000 }, async () => {
    ensureBuilt();
    const target = databaseTarget();
    const first = await startServer(target.env);
    const { usd, externals } = await setUp(first);
    const accepted = await loadAndKill(first, usd, externals);
    expect(first.child.signalCode).toBe('SIGKILL');
    expect(accepted.size).toBeGreaterThanOrEqual(KILL_AFTER - CONCURRENCY);
    expect(accepted.size).toBeLessThan(TRANSFERS);

    // On PostgreSQL, jobs the killed process had claimed stay leased for 60 s of real time; let
    // that time pass. A PGlite data directory is one process's, so the restart releases them.
    if (process.env.TEST_DATABASE_URL) {
      const between = await target.open();
      await between.database.db.updateTable('jobs').set({ locked_until: null }).where('locked_until', 'is not', null).execute();
      await between.close();
    }

    const second = await startServer(target.env);
    // Every delay is at most 30 s; the recovery job runs 10 s after acceptance and schedules
    // the rail's steps from then, so two advances cover everything.
    for (const seconds of [60, 60]) expect((await call(second, 'POST', '/sandbox/clock/advance', { seconds })).status).toBe(200);
    for (const [id, suffix] of accepted) {
      const { body } = await call(second, 'GET', `/transactions/${id}`);
      expect({ id, status: body.status, detail: body.failureDetail }).toEqual({ id, ...OUTCOMES[suffix], detail: OUTCOMES[suffix].detail });
    }
    second.child.kill('SIGTERM');
    await second.exited;

    const after = await target.open();
    try {
      const { db } = after.database;
      expect((await verifyLedger(db)).problems).toEqual([]);
      const held = await transactionsWithPendingLegs(db);
      expect(await terminalAmong(db, held)).toEqual([]);
      expect(held).toEqual([]);
      const stuck = await db.selectFrom('transactions').select(['id', 'status']).where('status', 'in', ['PENDING', 'PROCESSING']).execute();
      expect(stuck).toEqual([]);
      // Transfers accepted whose answer the kill swallowed count too: the balance is the sum of all completions.
      const completed = await db.selectFrom('transactions').select('id').where('status', '=', 'COMPLETED').where('type', '=', 'OUTGOING').execute();
      const account = await db.selectFrom('ledger_accounts').select(['posted_credits', 'posted_debits', 'pending_debits']).where('id', '=', usd).executeTakeFirstOrThrow();
      expect(Number(account.pending_debits)).toBe(0);
      expect(Number(account.posted_credits) - Number(account.posted_debits)).toBe(TRANSFERS * AMOUNT - completed.length * AMOUNT);
    } finally {
      await after.close();
    }
  });
});
