#!/usr/bin/env node
// `npm run bench`: Corridor under load next to this machine's ceilings and a Prism mock.
// How to run it and read it: docs/benchmarks.md.
//
//   npm run bench                      PGlite (embedded), or PostgreSQL when DATABASE_URL is set
//   npm run bench -- --quick           2-s smoke run (also BENCH_QUICK=1)
//   npm run bench -- --only customers  scenarios whose key or name contains "customers"
//
// Environment: BENCH_DURATION (s, 10), BENCH_CONNECTIONS (50), BENCH_WARMUP (s, 1), BENCH_QUICK,
// BENCH_SCENARIOS (= --only), BENCH_CEILINGS (keys, or "none"), BENCH_PRISM=0 (skip Prism),
// BENCH_PRISM_LOG (Prism log level; default "info", Prism's own default), BENCH_SEED_CUSTOMERS (1000), BENCH_PG_ACCOUNTS (1000),
// BENCH_SERVER_NODE_OPTIONS (extra node flags for the Corridor process, e.g. "--cpu-prof"),
// BENCH_SERVER_CLI (the cli.js to start instead of dist/cli.js, e.g. a patched copy to compare),
// BENCH_WAIT_QUIET (s, 0: before each measured run, wait up to this long for the machine to be idle),
// DATABASE_URL, DB_POOL_SIZE and other Corridor settings pass through to the server.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CEILINGS } from './ceilings.mjs';
import { cpuMeter, machineBusy, waitForQuiet } from './lib/cpu.mjs';
import { analyzeDatabase, committedTransactions, overdueJobs, prepareDatabase } from './lib/database.mjs';
import { runLoad } from './lib/load.mjs';
import { Cleanup, freePort, startNode, sweepTempDirs, waitForHttp } from './lib/processes.mjs';
import { renderReport } from './lib/report.mjs';
import { SCENARIOS } from './scenarios.mjs';
import { evaluateTargets } from './targets.mjs';
import { buildIfStale } from '../scripts/build.mjs';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const API_PREFIX = '/2025-10-13';
const PRISM_SPEC = resolve(ROOT, '../shared/reference/openapi-2025-10-13.yaml');

// ── options ──────────────────────────────────────────────────────────────────────────────────────
const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    'no-prism': { type: 'boolean', default: false },
    verbose: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) {
  const lines = readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1);
  const header = lines.slice(0, lines.findIndex((l) => !l.startsWith('//')));
  process.stdout.write(`${header.map((l) => l.replace(/^\/\/ ?/, '')).join('\n')}\n`);
  process.exit(0);
}

function numberEnv(name, fallback, { allowZero = false } = {}) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || (value === 0 && !allowZero)) {
    process.stderr.write(`bench: ${name} must be a ${allowZero ? 'non-negative' : 'positive'} number, got "${raw}"\n`);
    process.exit(64);
  }
  return value;
}

const quick = args.quick || ['1', 'true', 'yes'].includes(process.env.BENCH_QUICK ?? '');
const options = {
  quick,
  duration: numberEnv('BENCH_DURATION', quick ? 2 : 10),
  warmup: numberEnv('BENCH_WARMUP', quick ? 0.5 : 1, { allowZero: true }),
  connections: Math.round(numberEnv('BENCH_CONNECTIONS', 50)),
  seedCustomers: Math.round(numberEnv('BENCH_SEED_CUSTOMERS', quick ? 100 : 1000)),
  pgAccounts: Math.round(numberEnv('BENCH_PG_ACCOUNTS', 1000)),
  only: (args.only ?? process.env.BENCH_SCENARIOS ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean),
  ceilings: (process.env.BENCH_CEILINGS ?? '').split(',').map((s) => s.trim()).filter(Boolean),
  prism: !args['no-prism'] && !['0', 'false', 'no'].includes(process.env.BENCH_PRISM ?? ''),
  prismLog: process.env.BENCH_PRISM_LOG || 'info',
  serverNodeOptions: (process.env.BENCH_SERVER_NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean),
  serverCli: process.env.BENCH_SERVER_CLI ? resolve(process.env.BENCH_SERVER_CLI) : undefined,
  waitQuietS: numberEnv('BENCH_WAIT_QUIET', 0, { allowZero: true }),
  verbose: args.verbose,
};

// --only terms: an exact scenario key selects just that scenario; otherwise a term selects every
// scenario whose key or name contains it. Selected optional scenarios run too.
const selects = (s, term) =>
  SCENARIOS.some((x) => x.key.toLowerCase() === term) ? s.key.toLowerCase() === term : s.key.toLowerCase().includes(term) || s.name.toLowerCase().includes(term);
const scenarios = SCENARIOS.filter((s) => (options.only.length ? options.only.some((term) => selects(s, term)) : !s.optional));
if (scenarios.length === 0) {
  process.stderr.write(`bench: no scenario matches "${options.only.join(',')}"; keys: ${SCENARIOS.map((s) => s.key).join(', ')}\n`);
  process.exit(64);
}
const ceilings = CEILINGS.filter((c) => (options.ceilings.length ? options.ceilings.includes(c.key) : true));

const log = (line) => process.stderr.write(`${line}\n`);

/** With BENCH_WAIT_QUIET, waits for the machine to go idle before a measured run. */
async function quiet(label) {
  if (!options.waitQuietS) return undefined;
  const { busy, waitedS } = await waitForQuiet({ maxWaitS: options.waitQuietS });
  if (waitedS > 1) log(`  (waited ${waitedS} s for a quiet machine before ${label}; now ${busy}% of a core busy)`);
  return { busy, waitedS };
}
const fmt = (n) => Math.round(n).toLocaleString('en-US');

// ── clean-up, however the run ends ───────────────────────────────────────────────────────────────
const cleanup = new Cleanup();
let interrupted = false;
// A reader that goes away (`npm run bench | head`) must not kill the run before it cleans up.
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});
for (const event of ['uncaughtException', 'unhandledRejection']) {
  process.on(event, (error) => {
    log(`bench: ${error?.stack ?? error}`);
    cleanup.run().finally(() => process.exit(1));
  });
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (interrupted) {
      log('bench: second interrupt, exiting without waiting for clean-up');
      process.exit(130);
    }
    interrupted = true;
    log(`\nbench: ${signal}, stopping children and removing temp data…`);
    cleanup.run().finally(() => process.exit(130));
  });
}

// ── build ────────────────────────────────────────────────────────────────────────────────────────
function ensureBuilt() {
  return buildIfStale({ log });
}

function gitInfo() {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: ROOT, encoding: 'utf8' }).trim().split('\n').filter(Boolean).length;
    return { commit, srcFilesChanged: dirty };
  } catch {
    return undefined;
  }
}

// ── targets under test ───────────────────────────────────────────────────────────────────────────
function apiClient(target) {
  return {
    async request(method, path, body, headers = {}) {
      const response = await fetch(`${target.origin}${target.basePath}${path}`, {
        method,
        headers: { ...target.headers, ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      let parsed = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        // keep the text
      }
      return { status: response.status, body: parsed };
    },
    /** A multipart/form-data request (`form` is a FormData); fetch sets the content type. */
    async form(method, path, form) {
      const response = await fetch(`${target.origin}${target.basePath}${path}`, { method, headers: target.headers, body: form });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    },
  };
}

async function startCorridor(database) {
  const port = await freePort();
  const dataDir = cleanup.tempDir('corridor-bench-');
  const tokenId = `bench-${randomBytes(6).toString('hex')}`;
  const secret = randomBytes(24).toString('hex');
  const env = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL || 'warn',
    SERVICE_SANDBOX_TOKEN_ID: tokenId,
    SERVICE_SANDBOX_CLIENT_SECRET: secret,
  };
  delete env.PUBLIC_URL;
  delete env.NODE_OPTIONS;
  if (database.kind === 'postgres') env.DATABASE_URL = database.url;
  else delete env.DATABASE_URL;
  const server = startNode(cleanup, 'Corridor', options.serverCli ?? join(ROOT, 'dist/cli.js'), ['start'], {
    env,
    cwd: ROOT,
    nodeArgs: options.serverNodeOptions,
    echo: options.verbose,
  });
  const origin = `http://127.0.0.1:${port}`;
  await waitForHttp(`${origin}/healthz`, { proc: server, timeoutMs: 120_000 });
  const target = {
    kind: 'corridor',
    name: 'Corridor',
    origin,
    basePath: API_PREFIX,
    headers: { authorization: `Basic ${Buffer.from(`${tokenId}:${secret}`).toString('base64')}` },
    pid: server.pid,
    process: server,
  };
  server.output.mark();
  const check = await apiClient(target).request('GET', '/config');
  if (check.status !== 200) throw new Error(`Corridor rejected the bench credentials: HTTP ${check.status} ${JSON.stringify(check.body)}`);
  return target;
}

function prismVersion() {
  try {
    return JSON.parse(readFileSync(join(ROOT, 'node_modules/@stoplight/prism-cli/package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

async function startPrism() {
  const version = prismVersion();
  if (!version) return { skipped: '@stoplight/prism-cli is not installed (npm install)' };
  if (!existsSync(PRISM_SPEC)) return { skipped: `${relative(ROOT, PRISM_SPEC)} is absent, so there is nothing to mock` };
  const port = await freePort();
  const server = startNode(
    cleanup,
    'Prism',
    join(ROOT, 'node_modules/@stoplight/prism-cli/dist/index.js'),
    ['mock', PRISM_SPEC, '--port', String(port), '--host', '127.0.0.1', '--verboseLevel', options.prismLog],
    { cwd: ROOT, echo: options.verbose, quietStdout: !options.verbose },
  );
  const origin = `http://127.0.0.1:${port}`;
  await waitForHttp(`${origin}/`, { proc: server, timeoutMs: 120_000, accept: () => true });
  const headers = { authorization: `Basic ${Buffer.from('bench-prism:bench-prism-secret').toString('base64')}` };
  // Prism matches the spec's paths; whether it expects the `servers:` URL path in front varies, so ask it.
  const serverPath = /^servers:\s*\n\s*-\s*url:\s*(\S+)/m.exec(readFileSync(PRISM_SPEC, 'utf8'))?.[1];
  const candidates = [...new Set([serverPath ? new URL(serverPath).pathname.replace(/\/$/, '') : '', ''])];
  let basePath;
  for (const candidate of candidates) {
    const response = await fetch(`${origin}${candidate}/config`, { headers });
    await response.arrayBuffer();
    if (response.status !== 404) {
      basePath = candidate;
      break;
    }
  }
  if (basePath === undefined) return { skipped: `Prism answered 404 under every base path tried (${candidates.join(', ')})`, server };
  return {
    kind: 'prism',
    name: 'Prism',
    origin,
    basePath,
    headers,
    pid: server.pid,
    process: server,
    info: { version, spec: relative(ROOT, PRISM_SPEC), basePath, logLevel: options.prismLog },
  };
}

// ── scenarios ────────────────────────────────────────────────────────────────────────────────────
class Skip extends Error {}

function withTargetHeaders(requests, target) {
  return requests.map((r) => ({ ...r, headers: { ...target.headers, ...r.headers } }));
}

/** Sends the scenario's first request once, so a missing route or a rejected body is reported, not measured. */
async function probe(target, request) {
  let req = { ...request };
  if (typeof req.setupRequest === 'function') req = req.setupRequest(req, {});
  const response = await fetch(`${target.origin}${req.path}`, { method: req.method ?? 'GET', headers: req.headers, body: req.body });
  const text = await response.text();
  if (response.status >= 200 && response.status < 300) return;
  if (response.status === 404 && (target.kind === 'prism' || /no route/.test(text))) {
    throw new Skip(target.kind === 'prism' ? 'not in the reference spec' : `${req.method ?? 'GET'} ${req.path.split('?')[0]} is not built yet (404)`);
  }
  throw new Error(`probe ${req.method ?? 'GET'} ${req.path} → HTTP ${response.status}: ${text.slice(0, 300)}`);
}

async function runScenarios(target, database) {
  const memo = new Map();
  const ctx = {
    target: { kind: target.kind, origin: target.origin, basePath: target.basePath },
    path: (p) => `${target.basePath}${p}`,
    api: apiClient(target),
    runId: `${Date.now().toString(36)}-${target.kind}`,
    options: { seedCustomers: options.seedCustomers },
    once(key, fn) {
      if (!memo.has(key)) memo.set(key, fn());
      return memo.get(key);
    },
  };
  const results = [];
  for (const scenario of scenarios) {
    const base = { key: scenario.key, name: scenario.name, issue: scenario.issue, pairs: Boolean(scenario.pairs) };
    if (interrupted) break;
    if (target.kind === 'prism' && scenario.prism === false) {
      results.push({ ...base, skipped: 'not run against Prism' });
      continue;
    }
    try {
      if (target.kind === 'corridor' && scenario.setup) {
        const started = Date.now();
        await scenario.setup(ctx);
        await analyzeDatabase(database);
        const took = Date.now() - started;
        if (took > 500) log(`  ${target.name} · ${scenario.name}: set-up took ${(took / 1000).toFixed(1)} s`);
      }
      const requests = withTargetHeaders(scenario.requests(ctx), target);
      await probe(target, requests[0]);
      await quiet(`${target.name} ${scenario.name}`);
      const before = target.kind === 'corridor' ? await committedTransactions(database) : undefined;
      let meter;
      const load = await runLoad({
        origin: target.origin,
        requests,
        connections: options.connections,
        duration: options.duration,
        warmup: options.warmup,
        onStart: () => (meter = cpuMeter(target.pid)),
      });
      const cpu = meter?.stop();
      const jobsOverdue = target.kind === 'corridor' ? await overdueJobs(database) : undefined;
      let dbTransactionsPerRequest;
      if (before !== undefined) {
        await new Promise((r) => setTimeout(r, 1500)); // idle backends publish their counters within ~1 s
        const after = await committedTransactions(database);
        dbTransactionsPerRequest = Math.max(0, after - before - 1) / Math.max(1, load.total + load.warmupRequests);
      }
      const steps = scenario.pairs ? requests.length : 1;
      const perRequest = (percent) => (cpu && percent !== null && load.total > 0 ? Math.round((percent / 100) * ((load.durationS * 1e6) / load.total)) : undefined);
      const cpuMicrosPerRequest = cpu ? { server: perRequest(cpu.server), postgres: database.kind === 'postgres' ? perRequest(cpu.postgres) : undefined } : undefined;
      const result = { ...base, ...load, cpu, cpuMicrosPerRequest, dbTransactionsPerRequest, jobsOverdue, ...(scenario.pairs && { opsPerSecond: Math.round(load.rps / steps) }) };
      results.push(result);
      const flag = load.errors > 0 ? `  ✗ ${fmt(load.errors)} errors ${JSON.stringify(load.statusCodes)}` : '';
      log(`  ${target.name} · ${scenario.name}: ${fmt(load.rps)} req/s, p50 ${load.latency.p50} ms, p99 ${load.latency.p99} ms${flag}`);
    } catch (error) {
      if (error instanceof Skip) {
        results.push({ ...base, skipped: error.message });
        log(`  ${target.name} · ${scenario.name}: skipped (${error.message})`);
      } else {
        const exited = target.process.exitInfo;
        if (exited) error.message = `${target.name} exited (${exited.signal ?? `code ${exited.code}`}): ${error.message}\n${target.process.output}`;
        results.push({ ...base, failed: error.message });
        log(`  ${target.name} · ${scenario.name}: FAILED ${error.message}`);
      }
    }
  }
  return results;
}

// ── main ─────────────────────────────────────────────────────────────────────────────────────────
async function main() {
  const startedAt = new Date();
  sweepTempDirs('corridor-bench-');
  const build = options.serverCli ? { built: false, serverCli: options.serverCli } : ensureBuilt();
  if (build.warning) log(`WARNING: ${build.warning}`);
  const database = await prepareDatabase(cleanup, process.env.DATABASE_URL);
  const run = {
    startedAt: startedAt.toISOString(),
    connections: options.connections,
    duration: options.duration,
    warmup: options.warmup,
    quick: options.quick,
    seedCustomers: options.seedCustomers,
    database: { kind: database.kind, ...(database.kind === 'postgres' && { name: database.name, serverVersion: database.serverVersion }) },
    dbPoolSize: process.env.DB_POOL_SIZE ? Number(process.env.DB_POOL_SIZE) : 10,
    serverNodeOptions: options.serverNodeOptions,
    build,
    git: gitInfo(),
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model.trim() ?? 'unknown CPU',
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
      loadAverageAtStart: loadavg().map((l) => Math.round(l * 100) / 100),
    },
  };
  const idle = await machineBusy(1000);
  run.machine.busyAtStart = idle;
  if (idle !== null && idle > 25) {
    log(`Note: other processes are using ${idle}% of a core right now; results will understate this machine (BENCH_WAIT_QUIET=60 waits for quiet moments).`);
  }
  log(
    `Corridor bench: ${database.kind === 'postgres' ? `PostgreSQL (database ${database.name})` : 'PGlite'}, ` +
      `${options.connections} connections, ${options.duration} s + ${options.warmup} s warm-up per run, ${scenarios.length} scenario(s)`,
  );

  const ceilingResults = {};
  const env = { cleanup, database, connections: options.connections, duration: options.duration, warmup: options.warmup, startNode, runLoad, cpuMeter, options };
  for (const ceiling of ceilings) {
    if (interrupted) break;
    let result;
    try {
      await quiet(`ceiling ${ceiling.key}`);
      result = await ceiling.run(env);
    } catch (error) {
      result = { failed: error.message.split('\n')[0] };
    }
    ceilingResults[ceiling.key] = { key: ceiling.key, name: ceiling.name, unit: ceiling.unit, ...result };
    const r = ceilingResults[ceiling.key];
    log(r.failed || r.skipped ? `  ceiling ${ceiling.key}: ${r.failed ?? r.skipped}` : `  ceiling ${ceiling.key}: ${fmt(r.rps)} ${ceiling.unit}, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms`);
  }

  const corridor = await startCorridor(database);
  log(`  Corridor is up at ${corridor.origin} (pid ${corridor.pid})`);
  const corridorResults = await runScenarios(corridor, database);
  const serverLog = corridor.process.output.sinceMark.filter((l) => /"level":(40|50|60)/.test(l));
  await corridor.process.stop();

  let prismResults;
  let prismInfo;
  if (!options.prism) prismInfo = { skipped: 'skipped (BENCH_PRISM=0 or --no-prism)' };
  else if (!interrupted) {
    const prism = await startPrism();
    if (prism.skipped) {
      prismInfo = { skipped: prism.skipped };
      await prism.server?.stop();
    } else {
      log(`  Prism ${prism.info.version} is up at ${prism.origin}${prism.basePath}`);
      prismInfo = prism.info;
      prismResults = await runScenarios(prism, database);
      await prism.process.stop();
    }
  }
  if (interrupted) return;

  run.prism = prismInfo;
  run.finishedAt = new Date().toISOString();
  const results = {
    run,
    ceilings: ceilingResults,
    corridor: corridorResults,
    prism: prismResults,
    serverWarnings: serverLog.slice(-50),
  };
  results.targets = evaluateTargets({ corridor: corridorResults, prism: prismResults, ceilings: ceilingResults, run });

  process.stdout.write(`${renderReport(results)}\n`);
  if (serverLog.length) process.stdout.write(`\nCorridor logged ${serverLog.length} warning/error line(s) after start-up; the last ones are in the JSON results.\n`);
  const dir = join(ROOT, '.bench');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `results-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`\nResults: ${relative(process.cwd(), file)}\n`);
}

try {
  await main();
  await cleanup.run();
} catch (error) {
  log(`bench: ${error.stack ?? error.message}`);
  await cleanup.run();
  process.exitCode = 1;
}
