// The database of one bench run: a fresh PostgreSQL database (created from DATABASE_URL, dropped
// at the end) or PGlite in a temp dir.
import pg from 'pg';

const PREFIX = 'corridor_bench_';

function withDatabase(url, name) {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

function processAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

async function withClient(url, work) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * With `databaseUrl`: creates `corridor_bench_<pid>` next to the database it names (also drops
 * leftovers of earlier runs whose process is gone) and registers the drop with `cleanup`.
 * Returns { kind: 'postgres', url, name, serverVersion } or { kind: 'pglite' }.
 */
export async function prepareDatabase(cleanup, databaseUrl) {
  if (!databaseUrl) return { kind: 'pglite' };
  const name = `${PREFIX}${process.pid}`;
  const serverVersion = await withClient(databaseUrl, async (client) => {
    const stale = await client.query(`SELECT datname FROM pg_database WHERE datname ~ '^${PREFIX}[0-9]+$'`);
    for (const { datname } of stale.rows) {
      const pid = Number(datname.slice(PREFIX.length));
      if (pid !== process.pid && !processAlive(pid)) {
        await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
        process.stderr.write(`bench: dropped leftover database ${datname}\n`);
      }
    }
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await client.query(`CREATE DATABASE "${name}"`);
    const { rows } = await client.query('SHOW server_version');
    return rows[0].server_version;
  });
  cleanup.add(`drop database ${name}`, () =>
    withClient(databaseUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)),
  );
  return { kind: 'postgres', url: withDatabase(databaseUrl, name), name, serverVersion };
}

/**
 * Refreshes the planner's statistics after a scenario's set-up (PostgreSQL only). A fresh bench
 * database would otherwise be measured before autovacuum first analyzes the rows the set-up just
 * wrote, with plans cached for near-empty tables; an operator's database has statistics.
 */
export async function analyzeDatabase(database) {
  if (database.kind !== 'postgres') return;
  await withClient(database.url, (client) => client.query('ANALYZE'));
}

/**
 * Transactions committed in the bench database so far (pg_stat_database). Backends publish their
 * counters when idle, at most once a second, so read it ~1.5 s after the load stops.
 */
export async function committedTransactions(database) {
  if (database.kind !== 'postgres') return undefined;
  return withClient(database.url, async (client) => {
    const { rows } = await client.query('SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()');
    return Number(rows[0].n);
  });
}

/**
 * Jobs due more than two seconds ago and not yet run, when a load stops (PostgreSQL only): a
 * scenario whose background work (settlements, say) falls behind reports a throughput it could
 * not sustain, so the report flags it.
 */
export async function overdueJobs(database) {
  if (database.kind !== 'postgres') return undefined;
  return withClient(database.url, async (client) => {
    const { rows } = await client.query("SELECT count(*) AS n FROM jobs WHERE dead_at IS NULL AND due_at < now() - interval '2 seconds'");
    return Number(rows[0].n);
  });
}
