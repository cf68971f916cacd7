import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { listeningLines, runCli } from '../src/cli/commands.js';
import { createCorridor } from '../src/corridor.js';
import { openDatabase } from '../src/db/database.js';
import { MIGRATIONS_DIR } from '../src/db/migrate.js';
import { createPlatformWithToken, ensureSandboxPlatform } from '../src/bootstrap.js';
import { apiClient, testConfig } from './support/app.js';
import { resetDatabase, sharedTestDatabase } from './support/db.js';
import { CLI, ensureBuilt, killServer, ROOT, startServerProcess } from './support/server-process.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Runs the CLI against this worker's database (PostgreSQL) or a fresh PGlite directory. */
async function cli(args: string[], env: Record<string, string> = {}) {
  const lines: string[] = [];
  const errors: string[] = [];
  let base: Record<string, string> = {};
  if (process.env.TEST_DATABASE_URL) {
    await sharedTestDatabase(); // creates this worker's database
    base = { DATABASE_URL: workerDatabaseUrl() };
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'corridor-cli-'));
    dirs.push(dir);
    base = { DATA_DIR: dir };
  }
  const code = await runCli(args, { out: (l) => lines.push(l), err: (l) => errors.push(l), env: { ...base, LOG_LEVEL: 'silent', ...env } });
  return { code, out: lines.join('\n'), err: errors.join('\n') };
}

/** The environment for several CLI runs on one database: the worker's (PostgreSQL) or a new PGlite directory. */
function oneDatabaseEnv(): Record<string, string> {
  if (process.env.TEST_DATABASE_URL) return {};
  const dir = mkdtempSync(join(tmpdir(), 'corridor-cli-'));
  dirs.push(dir);
  return { DATA_DIR: dir };
}

/** A database with no tables: a PGlite directory, or a new PostgreSQL database beside the worker's. */
async function emptyDatabase() {
  let env: Record<string, string>;
  let drop = async () => {};
  if (!process.env.TEST_DATABASE_URL) {
    const dir = mkdtempSync(join(tmpdir(), 'corridor-cli-'));
    dirs.push(dir);
    await (await openDatabase({ dataDir: dir })).close();
    env = { DATA_DIR: dir };
  } else {
    const url = new URL(workerDatabaseUrl());
    url.pathname = `${url.pathname}_empty`;
    const name = url.pathname.slice(1);
    const admin = await openDatabase({ databaseUrl: process.env.TEST_DATABASE_URL, dataDir: 'memory' });
    await sql.raw(`drop database if exists ${name}`).execute(admin.db);
    await sql.raw(`create database ${name}`).execute(admin.db);
    env = { DATABASE_URL: url.toString() };
    drop = async () => {
      await sql.raw(`drop database if exists ${name}`).execute(admin.db);
      await admin.close();
    };
  }
  /** Opens the database for one piece of work, between CLI runs (PGlite takes one process at a time). */
  const use = async <T>(work: (db: Kysely<any>) => Promise<T>): Promise<T> => {
    const database = await openDatabase({ databaseUrl: env.DATABASE_URL, dataDir: env.DATA_DIR ?? 'memory' });
    try {
      return await work(database.db);
    } finally {
      await database.close();
    }
  };
  const hasTables = () => use(async (db) => (await sql<{ n: number }>`select count(*)::int as n from pg_tables where schemaname = 'public'`.execute(db)).rows[0].n > 0);
  return { env, use, hasTables, drop };
}

function workerDatabaseUrl(): string {
  const url = new URL(process.env.TEST_DATABASE_URL!);
  const worker = process.env.VITEST_POOL_ID ?? process.env.VITEST_WORKER_ID ?? '0';
  url.pathname = `/${url.pathname.slice(1) || 'test'}_${process.ppid}_w${worker}`;
  return url.toString();
}

describe('corridor CLI', () => {
  it('prints usage and fails on unknown commands', async () => {
    const result = await cli(['frobnicate']);
    expect(result.code).toBe(64);
    expect(result.err).toContain('Usage: corridor');
  });

  it('--help after any command prints the usage and succeeds', async () => {
    for (const args of [['--help'], ['-h'], ['help'], ['platform', 'create', '--help'], ['token', 'create', '--platform', 'x', '--help']]) {
      const result = await cli(args);
      expect(result.code, args.join(' ')).toBe(0);
      expect(result.out).toContain('Usage: corridor');
    }
  });

  it('exits non-zero naming a bad variable', async () => {
    const result = await cli(['migrate'], { PORT: 'abc' });
    expect(result.code).toBe(78);
    expect(result.err).toContain('PORT');
  });

  it('start and migrate refuse options and arguments they do not take', async () => {
    for (const args of [['migrate', '--bogus'], ['migrate', 'extra'], ['start', '--bogus']]) {
      const result = await cli(args);
      expect(result.code, args.join(' ')).toBe(64);
      expect(result.err).toContain('Usage: corridor');
    }
  });

  it('migrate names each migration on stderr as it starts, then finds nothing to do', async () => {
    const fresh = await emptyDatabase();
    try {
      const names = readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql')).map((f) => f.replace(/\.sql$/, '')).sort();
      const first = await cli(['migrate'], fresh.env);
      expect(first.code).toBe(0);
      expect(first.out).toBe(`applied ${names.length} migration(s): ${names.join(', ')}`);
      expect(first.err.split('\n')).toEqual(names.map((name) => expect.stringMatching(new RegExp(`^  \\[\\d+\\.\\d s\\] applying migration ${name}…$`))));
      expect(await cli(['migrate'], fresh.env)).toEqual({ code: 0, out: 'database is up to date', err: '' });
    } finally {
      await fresh.drop();
    }
  });

  it('refuses a database a newer Corridor migrated, naming the migration this version does not know', async () => {
    const newer = await emptyDatabase();
    try {
      expect((await cli(['migrate'], newer.env)).code).toBe(0);
      await newer.use((db) => sql`insert into kysely_migration (name, timestamp) values ('9999_from_a_newer_corridor', now()::text)`.execute(db));
      for (const args of [['migrate'], ['start'], ['platform', 'create', '--name', 'Old'], ['ledger', 'verify'], ['verification', 'list']]) {
        const result = await cli(args, { ...newer.env, PORT: '0', PUBLIC_URL: 'http://127.0.0.1:1' });
        expect(result.code, args.join(' ')).toBe(1);
        expect(result.err, args.join(' ')).toContain('migrated by a newer version of Corridor (it has migration 9999_from_a_newer_corridor, which this version does not know)');
        expect(result.out, args.join(' ')).toBe('');
      }
    } finally {
      await newer.drop();
    }
  });

  it('migrate and platform create refuse DATA_DIR=memory: what they make would be gone when they exit', async () => {
    for (const args of [['migrate'], ['platform', 'create', '--name', 'Gone']]) {
      const lines: string[] = [];
      const errors: string[] = [];
      const code = await runCli(args, { out: (l) => lines.push(l), err: (l) => errors.push(l), env: { DATA_DIR: 'memory', LOG_LEVEL: 'silent' } });
      expect(code, args.join(' ')).toBe(1);
      expect(lines).toEqual([]);
      expect(errors.join('\n')).toContain('with DATA_DIR=memory would make a database that is gone when it exits');
    }
  });

  it('platform create prints credentials that work; token create adds another', async () => {
    // One database for every platform created here: a new PGlite directory per call migrates each time.
    const here = oneDatabaseEnv();
    const created = await cli(['platform', 'create', '--name', 'Acme', '--json'], here);
    expect(created.code).toBe(0);
    const platform = JSON.parse(created.out);
    expect(platform).toMatchObject({ platformId: expect.stringMatching(/^Platform:/), mode: 'SANDBOX', umaDomain: '127.0.0.1:8080' });
    expect(platform.clientId).toBeTruthy();
    expect(platform.tokenId).toBe(platform.clientId);
    expect(platform.clientSecret).toBeTruthy();

    // The UMA domain comes from the CLI's own PUBLIC_URL (else HOST:PORT, as above), and the text output shows it.
    const text = await cli(['platform', 'create', '--name', 'Text'], { ...here, PUBLIC_URL: 'https://pay.example.com' });
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/^UMA domain: +pay\.example\.com /m);
    expect(text.out).toMatch(/^Client id: +[0-9a-f]+$/m);

    const production = await cli(['platform', 'create', '--name', 'Live', '--production', '--json'], here);
    expect(JSON.parse(production.out).mode).toBe('PRODUCTION');

    const missingName = await cli(['platform', 'create']);
    expect(missingName.code).toBe(64);
    expect(missingName.err).toContain('--name');
    for (const name of ['   ', 'x'.repeat(201)]) {
      const refused = await cli(['platform', 'create', '--name', name], here);
      expect(refused.code).toBe(64);
      expect(refused.err).toContain('1 to 200 characters');
    }

    if (!process.env.TEST_DATABASE_URL) return; // the rest needs the CLI and the app on one database
    const token = await cli(['token', 'create', '--platform', platform.platformId, '--permissions', 'VIEW', '--json']);
    expect(token.code).toBe(0);
    const { id, clientId, tokenId, clientSecret } = JSON.parse(token.out);
    expect(id).toMatch(/^Token:/);
    expect(tokenId).toBe(clientId);
    const corridor = await createCorridor({ config: testConfig(), database: await sharedTestDatabase(), logger: false });
    try {
      const api = apiClient(corridor, { clientId, clientSecret });
      expect((await api.get('/config')).status).toBe(200);
      expect((await api.post('/tokens', { name: 'x', permissions: ['VIEW'] })).status).toBe(403);
    } finally {
      await corridor.close();
    }
    const badPermission = await cli(['token', 'create', '--platform', platform.platformId, '--permissions', 'ROOT']);
    expect(badPermission.code).toBe(64);
    expect((await cli(['token', 'create', '--platform', platform.platformId, '--name', ''])).code).toBe(64);
  });
});

describe('corridor start', () => {
  it("prints a new sandbox platform's credentials before binding the port: a port in use does not lose them", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as AddressInfo;
    const fresh = await emptyDatabase();
    try {
      const result = await cli(['start'], { ...fresh.env, PORT: String(port) });
      expect(result.code).toBe(1);
      expect(result.err).toContain('EADDRINUSE');
      // A new database: one line for its schema, not one per migration.
      expect(result.err.match(/^ {2}\[\d+\.\d s\] creating the database schema…$/gm)).toHaveLength(1);
      expect(result.err).not.toContain('applying migration');
      expect(result.out).not.toContain('Corridor is listening');
      const clientId = result.out.match(/^ {2}Client id: +(\S+)$/m)?.[1];
      const clientSecret = result.out.match(/^ {2}Client secret: +(\S+)$/m)?.[1];
      expect(clientId && clientSecret).toBeTruthy();
      // The database was closed on the way out (PGlite's lock freed), and the printed secret is the one it holds.
      if ('DATA_DIR' in fresh.env) expect(existsSync(join(fresh.env.DATA_DIR, 'pglite.lock'))).toBe(false);
      const config = 'DATA_DIR' in fresh.env ? testConfig({ dataDir: fresh.env.DATA_DIR }) : testConfig({ databaseUrl: fresh.env.DATABASE_URL });
      const corridor = await createCorridor({ config, logger: false });
      try {
        expect((await apiClient(corridor, { clientId: clientId!, clientSecret: clientSecret! }).get('/config')).status).toBe(200);
      } finally {
        await corridor.close();
      }
    } finally {
      blocker.close();
      await fresh.drop();
    }
  });
});

describe('corridor start on port 0', () => {
  it('needs PUBLIC_URL, which links are made from; other commands do not', async () => {
    const refused = await cli(['start'], { PORT: '0' });
    expect(refused.code).toBe(78);
    expect(refused.err).toContain('PORT');
    expect((await cli(['migrate'], { PORT: '0' })).code).toBe(0);
  });
});

describe('corridor start with pinned credentials', () => {
  it('creates the sandbox platform for them without printing the client secret, which the environment already holds', async () => {
    ensureBuilt();
    const fresh = await emptyDatabase();
    const pinned = { SERVICE_SANDBOX_TOKEN_ID: 'pinned-print-token', SERVICE_SANDBOX_CLIENT_SECRET: 'pinned-print-secret-0001' };
    const server = await startServerProcess({ ...fresh.env, ...pinned });
    try {
      await server.waitForOutput(/Client id: +pinned-print-token/);
      expect(server.output()).toContain('(client secret from SERVICE_SANDBOX_CLIENT_SECRET)');
      expect(server.output()).not.toContain(pinned.SERVICE_SANDBOX_CLIENT_SECRET);
      const config = await fetch(`${server.origin}/2025-10-13/config`, {
        headers: { authorization: `Basic ${Buffer.from(`${pinned.SERVICE_SANDBOX_TOKEN_ID}:${pinned.SERVICE_SANDBOX_CLIENT_SECRET}`).toString('base64')}` },
      });
      expect(config.status).toBe(200);
    } finally {
      await killServer(server);
      await fresh.drop();
    }
  });
});

describe('start-up errors', () => {
  it('name the database that cannot be reached, without the password', async () => {
    const result = await cli(['migrate'], { DATABASE_URL: 'postgres://corridor:s3cret-pw@127.0.0.1:5/corridor?password=s3cret-pw' });
    expect(result.code).toBe(1);
    expect(result.err).toBe('corridor: cannot connect to the database at postgres://corridor@127.0.0.1:5/corridor (DATABASE_URL): connect ECONNREFUSED 127.0.0.1:5');
    expect(result.err).not.toContain('s3cret-pw');
  });

  it('name a Unix socket that cannot be reached by its directory, without the password', async () => {
    const result = await cli(['migrate'], { DATABASE_URL: 'postgres://corridor:s3cret-pw@/corridor?host=/nonexistent/corridor-socket&sslpassword=s3cret-pw' });
    expect(result.code).toBe(1);
    expect(result.err).toBe('corridor: cannot connect to the database at postgres://corridor@/corridor?host=/nonexistent/corridor-socket (DATABASE_URL): connect ENOENT /nonexistent/corridor-socket/.s.PGSQL.5432');
    expect(result.err).not.toContain('s3cret-pw');
  });

  it('name the PGlite directory that cannot be written', async () => {
    ensureBuilt();
    const dir = mkdtempSync(join(tmpdir(), 'corridor-cli-'));
    dirs.push(dir);
    await (await openDatabase({ dataDir: dir })).close();
    // The data directory is writable (the lock file goes there), the database's own is not.
    chmodSync(dir, 0o777);
    spawnSync('chmod', ['-R', 'a+rX,a-w', join(dir, 'pglite')]);
    // As root every directory is writable: run the command as nobody then.
    const asNobody = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    const run = spawnSync(process.execPath, [CLI, 'migrate'], { cwd: ROOT, env: { PATH: process.env.PATH, DATA_DIR: dir, LOG_LEVEL: 'silent' }, encoding: 'utf8', ...asNobody });
    spawnSync('chmod', ['-R', 'u+w', join(dir, 'pglite')]);
    expect(run.status).toBe(1);
    expect(run.stderr.trim()).toBe(`corridor: the embedded database directory ${join(dir, 'pglite')} cannot be written by this process (EACCES): fix its permissions, or set DATA_DIR to a writable directory`);
  });
});

describe('--platform naming a platform the database does not hold', () => {
  it('is a usage error, not an empty result that looks fine', async () => {
    const here = oneDatabaseEnv();
    expect((await cli(['migrate'], here)).code).toBe(0);
    for (const command of [['token', 'create'], ['ledger', 'verify'], ['verification', 'list']]) {
      const result = await cli([...command, '--platform', 'Platform:nope'], here);
      expect(result.code, command.join(' ')).toBe(64);
      expect(result.err, command.join(' ')).toContain('no platform Platform:nope');
      expect(result.out, command.join(' ')).toBe('');
    }
  });
});

describe('corridor start banner', () => {
  it('names the address it is bound to, and PUBLIC_URL apart when it differs', () => {
    const local = { host: '127.0.0.1', publicUrl: 'http://127.0.0.1:8080', dataDir: './data' };
    expect(listeningLines(local, 8080, true)).toEqual(['Corridor is listening on http://127.0.0.1:8080 (embedded PGlite in ./data)']);
    expect(listeningLines({ ...local, publicUrl: 'https://pay.example.com' }, 8080, false)).toEqual([
      'Corridor is listening on http://127.0.0.1:8080 (PostgreSQL)',
      '  Public URL:     https://pay.example.com',
    ]);
    expect(listeningLines({ ...local, host: '::1', publicUrl: 'http://[::1]:8080' }, 8080, false)).toEqual(['Corridor is listening on http://[::1]:8080 (PostgreSQL)']);
  });
});

describe('corridor ledger verify', () => {
  it('names a data directory that holds no database instead of checking a new, empty one', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'corridor-cli-'));
    dirs.push(parent);
    const missing = join(parent, 'mistyped');
    const errors: string[] = [];
    const code = await runCli(['ledger', 'verify'], { out: () => {}, err: (l) => errors.push(l), env: { DATA_DIR: missing, LOG_LEVEL: 'silent' } });
    expect(code).toBe(1);
    expect(errors.join('\n')).toContain(`no database in ${missing}`);
    expect(existsSync(missing)).toBe(false);

    const inMemory: string[] = [];
    const memoryCode = await runCli(['ledger', 'verify'], { out: () => {}, err: (l) => inMemory.push(l), env: { DATA_DIR: 'memory', LOG_LEVEL: 'silent' } });
    expect(memoryCode).toBe(1);
    expect(inMemory.join('\n')).toContain('no database in memory');
  });

  it('refuses a database without the Corridor schema instead of creating it and reporting on it', async () => {
    const schemaless = await emptyDatabase();
    try {
      const result = await cli(['ledger', 'verify'], schemaless.env);
      expect(result.code).toBe(1);
      expect(result.err).toContain('no Corridor schema');
      expect(await schemaless.hasTables()).toBe(false);
    } finally {
      await schemaless.drop();
    }
  });

  it('passes on a consistent ledger and exits 1 naming a drifted account', async () => {
    const here = oneDatabaseEnv();
    expect((await cli(['migrate'], here)).code).toBe(0);
    const empty = await cli(['ledger', 'verify'], here);
    expect(empty.code).toBe(0);
    expect(empty.out).toContain('ledger OK');
    // A line per check on stderr as it starts, so a long check shows where it is.
    expect(empty.err.match(/\[\d+\.\d s\] .*…/g)).toHaveLength(4);
    if (!process.env.TEST_DATABASE_URL) return; // the rest needs the CLI and the app on one database

    const corridor = await createCorridor({ config: testConfig(), database: await sharedTestDatabase(), logger: false });
    try {
      const { platform, token } = await createPlatformWithToken(corridor.services, { name: 'Verify', mode: 'SANDBOX' }, corridor.database);
      const api = apiClient(corridor, { clientId: token.clientId, clientSecret: token.clientSecret! });
      const customer = await api.post('/customers', { customerType: 'INDIVIDUAL', fullName: 'V Erify' });
      const account = (await api.get('/customers/internal-accounts', { customerId: customer.body.id, currency: 'USD' })).body.data[0].id;
      await api.post(`/sandbox/internal-accounts/${account}/fund`, { amount: 1_000 });
      expect((await cli(['ledger', 'verify', '--platform', platform.id])).code).toBe(0);

      await corridor.database.db.updateTable('ledger_accounts').set({ posted_credits: 999 }).where('id', '=', account).execute();
      const broken = await cli(['ledger', 'verify', '--platform', platform.id, '--json']);
      expect(broken.code).toBe(1);
      const report = JSON.parse(broken.out);
      expect(report.problems.some((line: string) => line.includes(account))).toBe(true);
      const text = await cli(['ledger', 'verify', '--platform', platform.id]);
      expect(text.code).toBe(1);
      expect(text.err).toContain(account);
      expect(text.err).toMatch(/ledger has \d+ problem\(s\)/);
      expect(text.out).not.toContain(account);
      await corridor.database.db.updateTable('ledger_accounts').set({ posted_credits: 1_000 }).where('id', '=', account).execute();
    } finally {
      await corridor.close();
    }
  });
});

describe('start-up sandbox platform', () => {
  it('adds pinned credentials to the sandbox platform an earlier start created, keeping its data', async () => {
    const database = await sharedTestDatabase();
    await resetDatabase(database);
    const corridor = await createCorridor({ config: testConfig(), database, logger: false });
    try {
      const first = await ensureSandboxPlatform(corridor.services, corridor.database, {});
      if (first.kind !== 'created') throw new Error(`expected a new platform, got ${first.kind}`);
      const original = apiClient(corridor, { clientId: first.credentials.token.clientId, clientSecret: first.credentials.token.clientSecret! });
      expect((await original.post('/customers', { customerType: 'INDIVIDUAL', platformCustomerId: 'kept-1', region: 'US' })).status).toBe(201);

      const env = { tokenId: 'pinned-later-token', clientSecret: 'pinned-later-secret-01' };
      const pinned = await ensureSandboxPlatform(corridor.services, corridor.database, env);
      expect(pinned).toEqual({ kind: 'configured', platformId: first.credentials.platform.id, clientId: env.tokenId });
      const listed = await apiClient(corridor, { clientId: env.tokenId, clientSecret: env.clientSecret }).get('/customers?platformCustomerId=kept-1');
      expect(listed.status).toBe(200);
      expect(listed.body.data).toHaveLength(1);
      expect((await original.get('/config')).status).toBe(200);
      expect(await corridor.services.platforms.list()).toHaveLength(1);
    } finally {
      await corridor.close();
    }
  });

  it.each([
    ['without credentials', {}, ['created', 'existing']],
    ['with pinned credentials', { tokenId: 'raced-sandbox-token', clientSecret: 'raced-sandbox-secret-01' }, ['configured', 'created']],
  ])('creates one sandbox platform when two servers start together on an empty database (%s)', async (_name, env, kinds) => {
    const database = await sharedTestDatabase();
    await resetDatabase(database);
    const [one, two] = [await createCorridor({ config: testConfig(), database, logger: false }), await createCorridor({ config: testConfig(), database, logger: false })];
    try {
      const results = await Promise.all([one, two].map((corridor) => ensureSandboxPlatform(corridor.services, corridor.database, env)));
      expect(results.map((r) => r.kind).sort()).toEqual(kinds);
      expect(await one.services.platforms.list()).toHaveLength(1);
    } finally {
      await two.close();
      await one.close();
    }
  });

  it('ensures exactly the configured credentials, idempotently, beside a production platform', async () => {
    const database = await sharedTestDatabase();
    await resetDatabase(database);
    const corridor = await createCorridor({ config: testConfig(), database, logger: false });
    try {
      await createPlatformWithToken(corridor.services, { name: 'Live', mode: 'PRODUCTION' }, corridor.database);
      const env = { tokenId: 'ci-sandbox-token', clientSecret: 'ci-sandbox-secret-0001' };
      const first = await ensureSandboxPlatform(corridor.services, corridor.database, env);
      expect(first.kind).toBe('created');
      const again = await ensureSandboxPlatform(corridor.services, corridor.database, env);
      expect(again.kind).toBe('configured');
      const api = apiClient(corridor, { clientId: env.tokenId, clientSecret: env.clientSecret });
      expect((await api.get('/config')).status).toBe(200);

      const rotated = { ...env, clientSecret: 'ci-sandbox-secret-0002' };
      await ensureSandboxPlatform(corridor.services, corridor.database, rotated);
      expect((await apiClient(corridor, { clientId: env.tokenId, clientSecret: rotated.clientSecret }).get('/config')).status).toBe(200);
      const platforms = await corridor.services.platforms.list();
      expect(platforms.filter((p) => p.name === 'Sandbox')).toHaveLength(1);
    } finally {
      await corridor.close();
    }
  });
});
