// Child processes, ports, temp dirs and the clean-up that must run however the bench ends.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const GUARD = pathToFileURL(fileURLToPath(new URL('./guard.mjs', import.meta.url))).href;

/** Last lines a child printed, to show when it fails. */
class Tail {
  constructor(max = 200) {
    this.max = max;
    this.lines = [];
  }
  push(chunk) {
    for (const line of chunk.toString().split('\n')) {
      if (!line) continue;
      this.lines.push(line);
      if (this.lines.length > this.max) this.lines.shift();
      if (this.sinceMark) {
        this.sinceMark.push(line);
        if (this.sinceMark.length > this.max) this.sinceMark.shift();
      }
    }
  }
  /** Starts collecting lines anew in `sinceMark` (e.g. once a server is up, to see what the load caused). */
  mark() {
    this.sinceMark = [];
  }
  toString(n = 40) {
    return this.lines.slice(-n).join('\n');
  }
}

/**
 * Everything the run created, undone in reverse order: children stopped (SIGTERM, then SIGKILL),
 * temp dirs removed, databases dropped. Runs once, on success, failure or Ctrl-C.
 */
export class Cleanup {
  constructor() {
    this.tasks = [];
    this.done = undefined;
  }
  add(label, fn) {
    const task = { label, fn };
    this.tasks.push(task);
    return () => {
      this.tasks = this.tasks.filter((t) => t !== task);
    };
  }
  /** A fresh directory under the OS temp dir, named `<prefix><pid>-…` so sweepTempDirs can find leftovers. */
  tempDir(prefix) {
    const dir = mkdtempSync(join(tmpdir(), `${prefix}${process.pid}-`));
    this.add(`remove ${dir}`, () => rmSync(dir, { recursive: true, force: true }));
    return dir;
  }
  run() {
    this.done ??= (async () => {
      for (const task of this.tasks.reverse()) {
        try {
          await task.fn();
        } catch (error) {
          process.stderr.write(`bench: clean-up step "${task.label}" failed: ${error.message}\n`);
        }
      }
      this.tasks = [];
    })();
    return this.done;
  }
}

/**
 * Starts `node [--import guard] <script> ...args` with an IPC channel. The guard makes the child exit
 * when this process dies; `stop()` ends it (SIGTERM, SIGKILL after 5 s) and is registered with the
 * clean-up.
 */
export function startNode(cleanup, name, script, args = [], { env = process.env, cwd, nodeArgs = [], echo = false, quietStdout = false } = {}) {
  const child = spawn(process.execPath, ['--import', GUARD, ...nodeArgs, script, ...args], {
    env,
    cwd,
    // quietStdout: a chatty child (Prism logs every request) writes to /dev/null, not through us.
    stdio: ['ignore', quietStdout ? 'ignore' : 'pipe', 'pipe', 'ipc'],
  });
  const output = new Tail();
  const onData = (chunk) => {
    output.push(chunk);
    if (echo) process.stderr.write(chunk);
  };
  child.stdout?.on('data', onData);
  child.stderr.on('data', onData);
  let exitInfo;
  const exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      exitInfo = { code, signal };
      resolve(exitInfo);
    });
    child.on('error', (error) => {
      output.push(`spawn error: ${error.message}`);
      exitInfo = { code: -1, signal: null };
      resolve(exitInfo);
    });
  });
  let stopping;
  const stop = () => {
    stopping ??= (async () => {
      if (exitInfo) return exitInfo;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      const info = await exited;
      clearTimeout(timer);
      return info;
    })();
    return stopping;
  };
  const unregister = cleanup.add(`stop ${name} (pid ${child.pid})`, stop);
  return {
    name,
    child,
    pid: child.pid,
    output,
    exited,
    get exitInfo() {
      return exitInfo;
    },
    /** Resolves with the first IPC message matching `predicate` (rejects if the child exits first). */
    message(predicate = () => true, timeoutMs = 120_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          cleanupListeners();
          reject(new Error(`${name} sent no message within ${timeoutMs / 1000} s\n${output}`));
        }, timeoutMs);
        const onMessage = (message) => {
          if (!predicate(message)) return;
          cleanupListeners();
          resolve(message);
        };
        const onExit = (code, signal) => {
          cleanupListeners();
          reject(new Error(`${name} exited (${signal ?? `code ${code}`}) before reporting\n${output}`));
        };
        const cleanupListeners = () => {
          clearTimeout(timer);
          child.off('message', onMessage);
          child.off('exit', onExit);
        };
        child.on('message', onMessage);
        child.on('exit', onExit);
      });
    },
    async stop() {
      const info = await stop();
      unregister();
      return info;
    },
  };
}

/** A TCP port that was free a moment ago (the OS picks it). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Polls `url` until `accept(status)`; fails early when `proc` exits. */
export async function waitForHttp(url, { proc, timeoutMs = 90_000, accept = (s) => s >= 200 && s < 300, headers } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (proc?.exitInfo) throw new Error(`${proc.name} exited (${proc.exitInfo.signal ?? `code ${proc.exitInfo.code}`}) while starting\n${proc.output}`);
    try {
      const response = await fetch(url, { headers, signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      if (accept(response.status)) return;
      last = `HTTP ${response.status}`;
    } catch (error) {
      last = error.cause?.code ?? error.message;
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`${url} not ready after ${timeoutMs / 1000} s (last: ${last})${proc ? `\n${proc.output}` : ''}`);
}

function processAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** Removes `<prefix><pid>-…` temp dirs left by runs that were killed (their pid is gone). */
export function sweepTempDirs(prefix) {
  for (const name of readdirSync(tmpdir())) {
    const match = name.startsWith(prefix) && /^(\d+)-/.exec(name.slice(prefix.length));
    if (!match || Number(match[1]) === process.pid || processAlive(Number(match[1]))) continue;
    rmSync(join(tmpdir(), name), { recursive: true, force: true });
    process.stderr.write(`bench: removed leftover ${join(tmpdir(), name)}\n`);
  }
}
