#!/usr/bin/env node
// `npm start`: compile when dist/ is stale, then run `corridor start`.
import { spawn } from 'node:child_process';
import { buildIfStale, CLI } from './build.mjs';

const { warning } = buildIfStale({ log: (line) => process.stdout.write(`${line}\n`) });
if (warning) process.stderr.write(`${warning}\n`);

const child = spawn(process.execPath, [CLI, 'start', ...process.argv.slice(2)], { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(signal ? 1 : (code ?? 0)));
