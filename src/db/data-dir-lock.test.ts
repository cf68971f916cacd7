import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, ensureBuilt, ROOT } from '../../test/support/server-process.js';
import { lockDataDir } from './data-dir-lock.js';

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
 * Starts `count` processes that all try to lock `location` at the same instant (each waits for
 * the same wall-clock moment, the last milliseconds in a busy loop), hold what they got for a
 * moment, and say whether they got it.
 */
async function contend(location: string, count: number): Promise<string[]> {
  const module = join(ROOT, 'dist/db/data-dir-lock.js');
  const at = Date.now() + 1_500;
  const script = `
    const { lockDataDir } = await import(${JSON.stringify(module)});
    await new Promise((r) => setTimeout(r, Math.max(0, ${at} - 30 - Date.now())));
    while (Date.now() < ${at});
    let outcome;
    try { lockDataDir(${JSON.stringify(location)}); outcome = 'locked'; } catch (e) { outcome = e.message.includes('in use') ? 'refused' : 'error: ' + e.message; }
    console.log(outcome);
    await new Promise((r) => setTimeout(r, 300));`;
  const runs = Array.from({ length: count }, () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    return new Promise<string>((resolve) => child.on('exit', () => resolve(out.trim())));
  });
  return Promise.all(runs);
}

describe('PGlite data directory lock', () => {
  it('goes to exactly one of several processes that open the directory at the same moment, also past a dead process\'s lock', { timeout: 60_000 }, async () => {
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
});
