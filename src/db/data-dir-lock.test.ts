import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, ensureBuilt, ROOT } from '../../test/support/server-process.js';
import { lockDataDir, removeStale } from './data-dir-lock.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function newLocation(): string {
  const dir = mkdtempSync(join(tmpdir(), 'corridor-lock-'));
  dirs.push(dir);
  return join(dir, 'pglite');
}

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
  return Number(child.stdout.trim());
}

/**
 * Starts `count` processes that all try to lock `location` at the same instant and say whether
 * they got it. Each loads the module, says it is ready, and is then sent one wall-clock moment for
 * all (which it waits for, the last milliseconds in a busy loop); each holds what it got until all
 * have answered, so a slow process cannot take a lock that a faster one has already let go.
 */
async function contend(location: string, count: number): Promise<string[]> {
  const module = join(ROOT, 'dist/db/data-dir-lock.js');
  const script = `
    import { createInterface } from 'node:readline';
    const { lockDataDir } = await import(${JSON.stringify(module)});
    const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
    console.log('ready');
    const at = Number((await lines.next()).value);
    await new Promise((r) => setTimeout(r, Math.max(0, at - 30 - Date.now())));
    while (Date.now() < at);
    let outcome;
    try { lockDataDir(${JSON.stringify(location)}); outcome = 'locked'; } catch (e) { outcome = e.message.includes('in use') ? 'refused' : 'error: ' + e.message; }
    console.log(outcome);
    await lines.next(); // the end of stdin: everyone has answered`;
  const children = Array.from({ length: count }, () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
    const lines: string[] = [];
    let waiting: (() => void) | undefined;
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      waiting?.();
    });
    const nthLine = (n: number) => new Promise<string>((resolve) => {
      const check = () => lines.length >= n && resolve(lines[n - 1]);
      waiting = check;
      check();
    });
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    return { child, nthLine, exited };
  });
  await Promise.all(children.map((c) => c.nthLine(1)));
  const at = Date.now() + 200;
  for (const { child } of children) child.stdin!.write(`${at}\n`);
  const outcomes = await Promise.all(children.map((c) => c.nthLine(2)));
  for (const { child } of children) child.stdin!.end();
  await Promise.all(children.map((c) => c.exited));
  return outcomes;
}

describe('PGlite data directory lock', () => {
  it('goes to exactly one of several processes that open the directory at the same moment, also past a dead process\'s lock', async () => {
    ensureBuilt();
    expect(existsSync(CLI)).toBe(true);
    const dead = deadPid();
    for (let round = 0; round < 6; round++) {
      const location = newLocation();
      if (round >= 3) writeFileSync(`${location}.lock`, String(dead));
      const outcomes = await contend(location, 4);
      expect(outcomes.sort(), `round ${round}`).toEqual(['locked', 'refused', 'refused', 'refused']);
    }
  });

  it('takes over a lock left by a process that died, and refuses one of a live process', () => {
    const location = newLocation();
    writeFileSync(`${location}.lock`, String(deadPid()));
    const unlock = lockDataDir(location);
    expect(readFileSync(`${location}.lock`, 'utf8')).toBe(String(process.pid));
    unlock();
    expect(existsSync(`${location}.lock`)).toBe(false);

    // Created, its pid not written yet: in use; left empty long ago: abandoned.
    writeFileSync(`${location}.lock`, '');
    expect(() => lockDataDir(location)).toThrow('is in use by another process');
    utimesSync(`${location}.lock`, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    lockDataDir(location)();

    writeFileSync(`${location}.lock`, String(process.ppid));
    expect(() => lockDataDir(location)).toThrow(`the embedded database in ${location} is in use by process ${process.ppid}`);
    expect(readFileSync(`${location}.lock`, 'utf8')).toBe(String(process.ppid));
  });

  it('a takeover that comes late never removes the lock of the process that took over first', () => {
    const lockFile = `${newLocation()}.lock`;
    const dead = deadPid();
    // This process read the dead holder's pid, then another took the lock over before it went on.
    writeFileSync(lockFile, String(process.ppid));
    expect(removeStale(lockFile, dead)).toBe(true); // try the create again, which finds the live lock
    expect(readFileSync(lockFile, 'utf8')).toBe(String(process.ppid));
    expect(existsSync(`${lockFile}.takeover-${dead}`)).toBe(false);

    // Another process is taking the same lock over right now: leave it to that one.
    writeFileSync(lockFile, String(dead));
    writeFileSync(`${lockFile}.takeover-${dead}`, String(process.ppid));
    expect(removeStale(lockFile, dead)).toBe(false);
    expect(readFileSync(lockFile, 'utf8')).toBe(String(dead));

    // A takeover whose process died: say what to remove rather than refuse for ever in silence.
    const deadTaker = deadPid();
    writeFileSync(`${lockFile}.takeover-${dead}`, String(deadTaker));
    expect(() => removeStale(lockFile, dead)).toThrow(`process ${deadTaker} died while taking over ${lockFile} from process ${dead}: remove ${lockFile} and ${lockFile}.takeover-${dead}`);
  });
});
