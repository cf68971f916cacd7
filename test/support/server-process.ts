// The built server (`node dist/cli.js start`) as a child process, for tests of what only a real
// process shows: signals, exit codes, what it prints, its lock file. Like test/crash.test.ts.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sharedTestDatabase } from './db.js';
// @ts-expect-error plain ESM helper without type declarations
import { buildIfStale } from '../../scripts/build.mjs';

export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const CLI = join(ROOT, 'dist/cli.js');

/** Builds dist/ when it is missing or older than src/ (CI builds before the tests, so this is for local runs). */
export function ensureBuilt(): void {
  buildIfStale({ quiet: true });
}

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}

/**
 * Where a server keeps its data: this worker's PostgreSQL database (migrated by
 * `sharedTestDatabase`), or a new PGlite directory. DATA_DIR is a new directory in both cases
 * (documents live there on PostgreSQL too: never the checkout's ./data). `cleanup` removes it.
 */
export async function serverDatabaseEnv(): Promise<{ env: Record<string, string>; dataDir: string; cleanup: () => void }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'corridor-process-'));
  const cleanup = () => rmSync(dataDir, { recursive: true, force: true });
  if (!process.env.TEST_DATABASE_URL) return { env: { DATA_DIR: dataDir }, dataDir, cleanup };
  await sharedTestDatabase();
  return { env: { DATABASE_URL: workerDatabaseUrl(), DATA_DIR: dataDir }, dataDir, cleanup };
}

/** This worker's PostgreSQL database (test/support/db.ts names it so). */
export function workerDatabaseUrl(): string {
  const url = new URL(process.env.TEST_DATABASE_URL!);
  const worker = process.env.VITEST_POOL_ID ?? process.env.VITEST_WORKER_ID ?? '0';
  url.pathname = `/${url.pathname.slice(1) || 'test'}_${process.ppid}_w${worker}`;
  return url.toString();
}

export interface ServerProcess {
  origin: string;
  port: number;
  child: ChildProcess;
  /** Settles with the exit code (null when a signal ended it) and the signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** Resolves once the output matches `pattern`. */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<void>;
}

/** Spawns `command` (default: the built CLI's `start`) and collects its output. */
export function spawnServer(env: Record<string, string>, options: { command?: string[]; spawn?: SpawnOptions } = {}): Omit<ServerProcess, 'origin' | 'port'> {
  const command = options.command ?? [process.execPath, CLI, 'start'];
  const child = spawn(command[0], command.slice(1), {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...options.spawn,
  });
  let output = '';
  const listeners = new Set<() => void>();
  const collect = (chunk: Buffer) => {
    output += String(chunk);
    for (const listener of listeners) listener();
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child.once('exit', (code, signal) => done({ code, signal })));
  const waitForOutput = (pattern: RegExp, timeoutMs = 60_000) =>
    new Promise<void>((resolveWait, reject) => {
      const check = () => {
        if (!pattern.test(output)) return;
        cleanupWait();
        resolveWait();
      };
      const timer = setTimeout(() => {
        cleanupWait();
        reject(new Error(`no output matching ${pattern} within ${timeoutMs} ms:\n${output}`));
      }, timeoutMs);
      const cleanupWait = () => {
        clearTimeout(timer);
        listeners.delete(check);
      };
      listeners.add(check);
      check();
    });
  return { child, exited, output: () => output, waitForOutput };
}

/** Starts the built server on a free port and waits until /healthz answers. Kill it when done (`stopServer`). */
export async function startServerProcess(env: Record<string, string>, options: { command?: string[]; spawn?: SpawnOptions } = {}): Promise<ServerProcess> {
  const port = await freePort();
  const server = spawnServer({ PORT: String(port), ...env }, options);
  const origin = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (server.child.exitCode !== null || server.child.signalCode !== null) throw new Error(`server exited early:\n${server.output()}`);
    const up = await fetch(`${origin}/healthz`).then((r) => r.ok, () => false);
    if (up) return { ...server, origin, port };
    if (i > 1_800) {
      server.child.kill('SIGKILL');
      throw new Error(`server did not start:\n${server.output()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Kills what is left of a server (a test that failed half-way). */
export async function killServer(server: Pick<ServerProcess, 'child' | 'exited'>): Promise<void> {
  if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
  await server.exited;
}
