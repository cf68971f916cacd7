// Ceiling: the cheapest possible "transfer" in the database Corridor uses — debit one balance row,
// credit another, insert one posting row — driven by `concurrency` clients for `durationS`.
// Runs in its own process (started by bench/run.mjs); reports over IPC:
//   { ok: true, tps, count, errors, latency: { p50, p99, ... } }
//
// variant "transaction": BEGIN; UPDATE; UPDATE; INSERT; COMMIT  (5 round trips)
// variant "statement":   the same work as one CTE statement     (1 round trip, implicit transaction)
//
// Config (JSON in argv[2]): { driver: 'pg' | 'pglite', databaseUrl?, dataDir?, variant,
//   concurrency, durationS, warmupS, accounts }
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { Samples } from '../lib/stats.mjs';

const config = JSON.parse(process.argv[2]);
const { variant, concurrency, durationS, warmupS, accounts } = config;
const SCHEMA = 'bench_ceiling';

const SETUP = [
  `CREATE SCHEMA IF NOT EXISTS ${SCHEMA}`,
  `DROP TABLE IF EXISTS ${SCHEMA}.postings, ${SCHEMA}.balances`,
  `CREATE TABLE ${SCHEMA}.balances (
     id text PRIMARY KEY,
     balance bigint NOT NULL,
     updated_at timestamptz(3) NOT NULL DEFAULT now())`,
  `CREATE TABLE ${SCHEMA}.postings (
     id text PRIMARY KEY,
     debit_account_id text NOT NULL,
     credit_account_id text NOT NULL,
     amount bigint NOT NULL CHECK (amount > 0),
     created_at timestamptz(3) NOT NULL DEFAULT now())`,
  `INSERT INTO ${SCHEMA}.balances (id, balance)
     SELECT 'InternalAccount:' || lpad(g::text, 8, '0'), 1000000000000 FROM generate_series(1, ${Number(accounts)}) g`,
  `ANALYZE ${SCHEMA}.balances`,
];

// Rows are changed in id order in both variants, so concurrent transfers cannot deadlock.
const MOVE = `UPDATE ${SCHEMA}.balances SET balance = balance + $2, updated_at = now() WHERE id = $1`;
const INSERT = `INSERT INTO ${SCHEMA}.postings (id, debit_account_id, credit_account_id, amount) VALUES ($1, $2, $3, $4)`;
const ONE_STATEMENT = `WITH first AS (
    UPDATE ${SCHEMA}.balances SET balance = balance + $6::bigint, updated_at = now() WHERE id = $5 RETURNING id),
  second AS (
    UPDATE ${SCHEMA}.balances SET balance = balance + $8::bigint, updated_at = now() WHERE id = $7 RETURNING id)
  INSERT INTO ${SCHEMA}.postings (id, debit_account_id, credit_account_id, amount)
  SELECT $1, $2, $3, $4::bigint FROM first, second`;

function accountId(n) {
  return `InternalAccount:${String(n).padStart(8, '0')}`;
}

function randomTransfer() {
  const a = 1 + Math.floor(Math.random() * accounts);
  let b = 1 + Math.floor(Math.random() * (accounts - 1));
  if (b >= a) b++;
  const debit = accountId(a);
  const credit = accountId(b);
  const amount = 1 + Math.floor(Math.random() * 10_000);
  const moves = [
    [debit, -amount],
    [credit, amount],
  ];
  if (b < a) moves.reverse();
  return { id: `Posting:${randomUUID()}`, debit, credit, amount, moves };
}

function statementParams(t) {
  return [t.id, t.debit, t.credit, t.amount, ...t.moves[0], ...t.moves[1]];
}

/** Returns { run(t), close(), setup() } for the configured driver. */
async function openDriver() {
  if (config.driver === 'pglite') {
    const { PGlite } = await import('@electric-sql/pglite');
    mkdirSync(config.dataDir, { recursive: true });
    const db = new PGlite(`${config.dataDir}/pglite`);
    await db.waitReady;
    return {
      setup: async () => {
        for (const statement of SETUP) await db.exec(statement);
      },
      // PGlite is one connection: transactions are serialized by its own lock, as in Corridor.
      run:
        variant === 'statement'
          ? (t) => db.query(ONE_STATEMENT, statementParams(t))
          : (t) =>
              db.transaction(async (tx) => {
                for (const move of t.moves) await tx.query(MOVE, move);
                await tx.query(INSERT, [t.id, t.debit, t.credit, t.amount]);
              }),
      close: () => db.close(),
    };
  }
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: config.databaseUrl, max: concurrency });
  pool.on('error', () => {});
  return {
    setup: async () => {
      for (const statement of SETUP) await pool.query(statement);
      // Open every connection before timing starts.
      const clients = await Promise.all(Array.from({ length: concurrency }, () => pool.connect()));
      for (const c of clients) c.release();
    },
    run:
      variant === 'statement'
        ? (t) => pool.query(ONE_STATEMENT, statementParams(t))
        : async (t) => {
            const client = await pool.connect();
            try {
              await client.query('BEGIN');
              for (const move of t.moves) await client.query(MOVE, move);
              await client.query(INSERT, [t.id, t.debit, t.credit, t.amount]);
              await client.query('COMMIT');
            } catch (error) {
              await client.query('ROLLBACK').catch(() => {});
              throw error;
            } finally {
              client.release();
            }
          },
    close: () => pool.end(),
  };
}

async function main() {
  const driver = await openDriver();
  await driver.setup();
  const samples = new Samples();
  let errors = 0;
  let firstError;
  let measuring = false;
  let stop = false;
  let count = 0;

  // PGlite answers without real I/O, so a loop of awaits would starve the timers that end the run.
  const yieldToTimers = config.driver === 'pglite' ? () => new Promise(setImmediate) : () => undefined;

  async function worker() {
    while (!stop) {
      await yieldToTimers();
      const t = randomTransfer();
      const started = performance.now();
      try {
        await driver.run(t);
        if (measuring && !stop) {
          samples.push(performance.now() - started);
          count++;
        }
      } catch (error) {
        if (measuring) errors++;
        firstError ??= error.message;
      }
    }
  }

  const workers = Array.from({ length: concurrency }, worker);
  await new Promise((r) => setTimeout(r, warmupS * 1000));
  measuring = true;
  process.send({ phase: 'measuring' });
  const startedAt = performance.now();
  await new Promise((r) => setTimeout(r, durationS * 1000));
  stop = true;
  const elapsedS = (performance.now() - startedAt) / 1000;
  await Promise.all(workers);
  // Report before closing, so the runner reads the backends' CPU while they still exist.
  await report({ ok: true, tps: Math.round(count / elapsedS), count, errors, firstError, latency: samples.summary() });
  await driver.close();
  process.exit(0);
}

function report(message) {
  return new Promise((resolve) => process.send(message, resolve));
}

main().catch(async (error) => {
  await report({ ok: false, error: error.stack ?? String(error) });
  process.exit(1);
});
