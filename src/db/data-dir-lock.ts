import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';

/**
 * PGlite is one process's database: a second process opening the same directory would corrupt
 * it. A pid lock file turns that into a clear error instead.
 *
 * The lock file is created exclusively (`wx`): of processes opening the directory at the same
 * moment, one creates it and the others find it. Reading it first and writing it after let two
 * processes that opened one directory within a millisecond both have it (2 of 4 rounds). A lock
 * of a process that no longer runs is taken over, once (`takeOverStale`).
 */
export function lockDataDir(location: string): () => void {
  mkdirSync(location, { recursive: true });
  const lockFile = `${location}.lock`;
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(lockFile, String(process.pid), { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = readHolder(lockFile);
    // This process's own pid: a pid reused after a restart (a container's), or a second open here.
    if (holder === process.pid) break;
    const stale = holder === 0 || (holder !== undefined && !processAlive(holder));
    if (attempt > 0 || !stale || !takeOverStale(lockFile, holder)) {
      throw new Error(`the embedded database in ${location} is in use by ${holder === undefined ? 'another process' : `process ${holder}`}; stop it first or use DATABASE_URL`);
    }
  }
  holdLock(lockFile);
  return () => {
    dropLock(lockFile);
    removeOwnLock(lockFile);
  };
}

/** How long a lock file may stay empty (its creator has not written its pid yet) before it counts as abandoned. */
const EMPTY_LOCK_GRACE_MS = 10_000;

/**
 * The pid in a lock file; `undefined` while it cannot tell (the file was created but its pid not
 * yet written); 0 when it is gone or was left empty long ago (nobody holds it).
 */
function readHolder(lockFile: string): number | undefined {
  try {
    const text = readFileSync(lockFile, 'utf8').trim();
    if (/^\d+$/.test(text)) return Number(text);
    return Date.now() - statSync(lockFile).mtimeMs > EMPTY_LOCK_GRACE_MS ? 0 : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
}

/**
 * Removes a lock file whose holder is dead, unless another process did first and locked the
 * directory since. The file is moved aside (one rename wins), and put back if what was moved is
 * not the dead holder's lock after all. False when another process holds the directory now.
 */
function takeOverStale(lockFile: string, deadHolder: number): boolean {
  const aside = `${lockFile}.${process.pid}.stale`;
  try {
    renameSync(lockFile, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true; // gone: try to create it again
    throw error;
  }
  const moved = readHolder(aside);
  if (moved === deadHolder || moved === 0) {
    rmSync(aside, { force: true });
    return true;
  }
  // Another process took the stale lock over between our read and the rename: give it back.
  try {
    linkSync(aside, lockFile);
  } finally {
    rmSync(aside, { force: true });
  }
  return false;
}

/**
 * Lock files of this process, removed when it exits whichever way it does short of a signal's
 * default action or SIGKILL (a shutdown whose close failed, a second signal): the next start
 * then finds no lock at all rather than one of a dead process.
 */
const heldLocks = new Set<string>();
process.on('exit', () => {
  for (const lockFile of heldLocks) removeOwnLock(lockFile);
});

/**
 * A stop signal's default action ends the process without the 'exit' event, and so without
 * removing the lock. While a lock is held and nothing else handles the signal (a command at work,
 * a server still starting), the process exits as the default action would (128 + the signal's
 * number), through 'exit'. Once the server's graceful stop listens too, the signal is left to it.
 */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
const exitOnSignal = (signal: NodeJS.Signals) => {
  if (process.listenerCount(signal) === 1) process.exit(128 + constants.signals[signal]);
};

function holdLock(lockFile: string): void {
  heldLocks.add(lockFile);
  if (heldLocks.size === 1) for (const signal of STOP_SIGNALS) process.on(signal, exitOnSignal);
}

function dropLock(lockFile: string): void {
  if (heldLocks.delete(lockFile) && heldLocks.size === 0) for (const signal of STOP_SIGNALS) process.off(signal, exitOnSignal);
}

function removeOwnLock(lockFile: string): void {
  try {
    if (readFileSync(lockFile, 'utf8') === String(process.pid)) rmSync(lockFile, { force: true });
  } catch {
    // Gone already.
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
