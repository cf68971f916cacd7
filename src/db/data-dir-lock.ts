import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

/**
 * PGlite is one process's database: a second process opening the same directory would corrupt
 * it. A pid lock file turns that into a clear error instead.
 */
export function lockDataDir(location: string): () => void {
  mkdirSync(location, { recursive: true });
  const lockFile = `${location}.lock`;
  try {
    const holder = Number(readFileSync(lockFile, 'utf8'));
    if (holder && holder !== process.pid && processAlive(holder)) {
      throw new Error(`the embedded database in ${location} is in use by process ${holder}; stop it first or use DATABASE_URL`);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  writeFileSync(lockFile, String(process.pid));
  heldLocks.add(lockFile);
  return () => {
    heldLocks.delete(lockFile);
    removeOwnLock(lockFile);
  };
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
