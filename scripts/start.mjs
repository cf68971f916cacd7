#!/usr/bin/env node
// `npm start`: compile when dist/ is stale, then run `corridor start` in this very process.
//
// In this process rather than a child: npm passes SIGTERM and SIGINT on to the process it started
// (package.json's `exec` leaves no shell in between, which would die of the signal without
// passing it on), so they reach the server itself. A child left here was orphaned, still serving,
// when the npm process got SIGTERM.
import { pathToFileURL } from 'node:url';
import { buildIfStale, CLI } from './build.mjs';

const { warning } = buildIfStale({ log: (line) => process.stdout.write(`${line}\n`) });
if (warning) process.stderr.write(`${warning}\n`);

// npm gone without passing a signal on (killed with SIGKILL, say; a shell between us that died of
// one): this process was handed to another parent. It stops as if told to, rather than serve on
// unseen.
const parent = process.ppid;
const watch = setInterval(() => {
  if (process.ppid === parent) return;
  clearInterval(watch);
  process.stderr.write(`corridor: the process that started it (${parent}) is gone: stopping\n`);
  process.kill(process.pid, 'SIGTERM');
}, 1_000);
watch.unref();

process.argv = [process.argv[0], CLI, 'start', ...process.argv.slice(2)];
await import(pathToFileURL(CLI).href);
