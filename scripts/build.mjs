// Compiles Corridor when dist/ is missing or older than a source file. Shared by `npm start`,
// the benchmark and the crash test, which all run the built server.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const CLI = join(ROOT, 'dist/cli.js');

function newestSourceMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSourceMtime(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * Builds if needed. Returns `{built}`, and `warning` when tsc reported errors but left a dist/
 * behind; throws when there is nothing to run.
 */
export function buildIfStale({ log = () => {}, quiet = false } = {}) {
  if (existsSync(CLI) && statSync(CLI).mtimeMs >= newestSourceMtime(join(ROOT, 'src'))) return { built: false };
  log('Building Corridor…');
  const result = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], {
    cwd: ROOT,
    stdio: quiet ? 'pipe' : 'inherit',
    encoding: 'utf8',
  });
  if (!existsSync(CLI)) throw new Error(`the build failed and there is no dist/cli.js to run\n${result.stdout ?? ''}${result.stderr ?? ''}`);
  if (result.status !== 0) return { built: true, warning: 'the build reported errors; dist/ may be out of date' };
  return { built: true };
}
