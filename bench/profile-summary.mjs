#!/usr/bin/env node
// Summarizes a V8 .cpuprofile (from BENCH_SERVER_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=DIR"):
// inclusive time of the request path's usual suspects, self time by package / source area, then
// the top functions. Percentages are of busy samples (idle excluded).
//
// On a machine whose cores are shared with the load generator and PostgreSQL, time the process
// spent descheduled is charged to whatever it was doing when it lost the CPU — mostly socket
// writes (`writev`), which wake the reader. Read "writev" as "waiting for a core" there.
//
//   node bench/profile-summary.mjs DIR/CPU.*.cpuprofile [--top 30] [--last SECONDS]
//
// --last N keeps only the samples of the last N seconds of the profile: with one scenario selected
// (--only), that is the load, without start-up and seeding.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '30' }, last: { type: 'string' } } });
if (positionals.length !== 1) {
  process.stderr.write('usage: node bench/profile-summary.mjs FILE.cpuprofile [--top N]\n');
  process.exit(64);
}
const profile = JSON.parse(readFileSync(positionals[0], 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map();
const times = [];
let t = profile.startTime;
for (const dt of profile.timeDeltas) times.push((t += dt));
const since = values.last ? profile.endTime - Number(values.last) * 1e6 : -Infinity;
for (let i = 0; i < profile.samples.length; i++) {
  if (times[i] < since) continue;
  const dt = profile.timeDeltas[i] ?? 0;
  selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + dt);
}

function area(url, functionName) {
  if (!url) return functionName.startsWith('(') ? functionName : '(native/builtin)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (url.startsWith('node:')) return url;
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return `corridor ${url.slice(dist + 6).split('/').slice(0, -1).join('/') || '.'}/`;
  return url;
}

const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

// fast-json-stringify's generated serializers have no URL; fastify's reply.serialize calls them.
const isSerialization = (f) => (f.functionName === 'serialize' && f.url.includes('/fastify/lib/reply.js')) || f.url.includes('/fast-json-stringify/');

/** Inclusive buckets: a sample counts for a bucket when any frame of its stack matches. */
const BUCKETS = [
  ['response serialization (reply.serialize)', isSerialization],
  ['  of which ajv (oneOf/anyOf branch choice)', (f, stack) => f.url.includes('/ajv') && stack.some(isSerialization)],
  ['request validation (ajv, outside serialization)', (f, stack) => f.url.includes('/ajv') && !stack.some(isSerialization)],
  ['kysely (query building, compiling)', (f) => f.url.includes('/kysely/')],
  ['pg driver (protocol, row parsing)', (f) => /\/(pg|pg-protocol|pg-types|pg-pool|postgres-[a-z]+)\//.test(f.url)],
  ['pino logging', (f) => f.url.includes('/pino')],
  ['prom-client metrics', (f) => f.url.includes('/prom-client/')],
  ['fastify core + router', (f) => /\/(fastify|find-my-way|light-my-request|avvio)\//.test(f.url)],
  ['node http', (f) => f.url.startsWith('node:_http')],
  ['socket writes (writev/writeBuffer)', (f) => f.functionName === 'writev' || f.functionName === 'writeBuffer'],
  ['crypto (hashing, random ids)', (f) => f.url.startsWith('node:internal/crypto')],
  ['corridor code (dist/, inclusive)', (f) => f.url.includes('/dist/') && !f.url.includes('node_modules')],
  ['garbage collector', (f) => f.functionName === '(garbage collector)'],
];

function frameKey({ functionName, url, lineNumber }) {
  return `${functionName || '(anonymous)'} ${url ? `${url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${lineNumber + 1}` : ''}`;
}

let total = 0;
let busy = 0;
const bucketUs = new Map(BUCKETS.map(([name]) => [name, 0]));
const areas = new Map();
const functions = new Map();
const inclusive = new Map();
for (const [id, us] of selfUs) {
  const node = byId.get(id);
  const { functionName, url, lineNumber } = node.callFrame;
  total += us;
  if (functionName !== '(idle)' && functionName !== '(program)') {
    busy += us;
    const stack = [];
    for (let n = id; n !== undefined; n = parent.get(n)) stack.push(byId.get(n).callFrame);
    for (const [name, match] of BUCKETS) if (stack.some((f) => match(f, stack))) bucketUs.set(name, bucketUs.get(name) + us);
    const seen = new Set();
    for (const f of stack) {
      const key = frameKey(f);
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + us);
    }
  }
  const a = area(url, functionName);
  areas.set(a, (areas.get(a) ?? 0) + us);
  const key = frameKey(node.callFrame);
  functions.set(key, (functions.get(key) ?? 0) + us);
}

const pct = (us) => `${((us / busy) * 100).toFixed(1).padStart(5)}%`;
const top = Number(values.top);
process.stdout.write(`sampled ${(total / 1e6).toFixed(1)} s, busy ${(busy / 1e6).toFixed(1)} s, idle ${((total - busy) / 1e6).toFixed(1)} s (waiting for I/O); percentages are of busy time\n\n`);
process.stdout.write('inclusive time of the usual suspects (overlapping)\n');
for (const [name, us] of bucketUs) process.stdout.write(`  ${pct(us)}  ${name}\n`);
process.stdout.write('\nself time by area\n');
const notBusy = ([k]) => !k.startsWith('(idle)') && !k.startsWith('(program)');
for (const [a, us] of [...areas].filter(notBusy).sort((x, y) => y[1] - x[1]).slice(0, top)) process.stdout.write(`  ${pct(us)}  ${a}\n`);
process.stdout.write('\ntop Corridor functions (inclusive time)\n');
for (const [f, us] of [...inclusive].filter(([k]) => k.includes(' dist/') && !k.includes('node_modules')).sort((x, y) => y[1] - x[1]).slice(0, top)) {
  process.stdout.write(`  ${pct(us)}  ${f}\n`);
}
process.stdout.write('\ntop functions (self time)\n');
for (const [f, us] of [...functions].filter(notBusy).sort((x, y) => y[1] - x[1]).slice(0, top)) process.stdout.write(`  ${pct(us)}  ${f}\n`);
