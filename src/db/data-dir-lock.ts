import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';

/**
 * PGlite is one process's database: a second process opening the same directory would corrupt
 * it. A pid lock file turns that into a clear error instead.
 *
 * The lock file is created exclusively (`wx`): of processes opening the directory at the same
 * moment, one creates it and the others find it. Reading it first and writing it after let two
 * processes that opened one directory within a millisecond both have it (2 of 4 rounds). A lock
 * of a process that no longer runs is taken over, once (`removeStale`).
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
    // Gone since the create failed (its holder let it go): create it again, a bounded number of times.
    if (holder === GONE && attempt < 3) continue;
    const stale = holder === ABANDONED || (typeof holder === 'number' && holder > 0 && !processAlive(holder));
    if (attempt > 0 || !stale || !removeStale(lockFile, holder)) {
      throw new Error(`the embedded database in ${location} is in use by ${typeof holder === 'number' && holder > 0 ? `process ${holder}` : 'another process'}; stop it first or use DATABASE_URL`);
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
/** `readHolder`: no lock file. */
const GONE = 'gone';
/** `readHolder`: a lock file left empty long ago (its creator died before writing its pid). */
const ABANDONED = 0;

/**
 * The pid in a lock file; `undefined` while it cannot tell (the file was created but its pid not
 * yet written); ABANDONED when it was left empty long ago; GONE when there is none.
 */
function readHolder(lockFile: string): number | undefined | typeof GONE {
  try {
    const text = readFileSync(lockFile, 'utf8').trim();
    if (/^\d+$/.test(text)) return Number(text);
    return Date.now() - statSync(lockFile).mtimeMs > EMPTY_LOCK_GRACE_MS ? ABANDONED : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return GONE;
    throw error;
  }
}

/**
 * Removes the lock file of a dead holder (or an abandoned empty one); true when the caller should
 * try to create it again. Only the process that creates this holder's takeover marker (`wx`) may
 * remove the lock, and only while it still holds that holder's pid: the lock cannot change
 * under the check, since nothing else removes it, and a lock another process has created since is
 * never removed. (Moving the lock aside and putting it back when it turned out live let a third
 * process create one in between: two processes then had the directory.)
 */
export function removeStale(lockFile: string, deadHolder: number): boolean {
  const marker = `${lockFile}.takeover-${deadHolder}`;
  try {
    writeFileSync(marker, String(process.pid), { flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const taker = readHolder(marker);
    if (typeof taker === 'number' && taker > 0 && !processAlive(taker)) {
      throw new Error(`process ${taker} died while taking over ${lockFile} from process ${deadHolder}: remove ${lockFile} and ${marker} once no process uses the database`);
    }
    return false; // another process is taking it over now
  }
  try {
    if (readHolder(lockFile) === deadHolder) rmSync(lockFile);
    return true;
  } finally {
    rmSync(marker, { force: true });
  }
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
