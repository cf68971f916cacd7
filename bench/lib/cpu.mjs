// Where the CPU went during a measurement (Linux /proc; elsewhere every figure is null).
// Percentages are of ONE core: 100 = one core busy for the whole interval.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { cpus } from 'node:os';

const HAVE_PROC = existsSync('/proc/stat');
let ticksPerSecond = 100;
try {
  ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
} catch {
  // keep the Linux default
}

/** { user, system } CPU ms of one process (its threads included); undefined if it is gone. */
function processCpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: (Number(fields[11]) * 1000) / ticksPerSecond, system: (Number(fields[12]) * 1000) / ticksPerSecond };
  } catch {
    return undefined;
  }
}

/** pid → CPU ms of every process whose command name is `postgres` (the local cluster's backends). */
function postgresCpuMs() {
  const byPid = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      if (comm !== 'postgres') continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      byPid.set(entry, ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond);
    } catch {
      // the process ended while we looked
    }
  }
  return byPid;
}

/** CPU used between two postgresCpuMs() readings by the backends alive at the second one. */
function postgresDelta(before, after) {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

/** Busy ms of the whole machine, summed over cores. */
function machineBusyMs() {
  const [line] = readFileSync('/proc/stat', 'utf8').split('\n');
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = v[3] + (v[4] || 0);
  const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
  return ((total - idle) * 1000) / ticksPerSecond;
}

/**
 * Starts a CPU meter over the server process `serverPid` (may be undefined), the PostgreSQL
 * cluster, this process (the load generator) and the whole machine. `stop()` returns percentages
 * of one core over the elapsed wall time.
 */
export function cpuMeter(serverPid) {
  if (!HAVE_PROC) return { stop: () => null };
  const start = {
    wall: performance.now(),
    server: serverPid ? processCpuMs(serverPid) : undefined,
    postgres: postgresCpuMs(),
    bench: process.cpuUsage(),
    machine: machineBusyMs(),
  };
  return {
    stop() {
      const wallMs = performance.now() - start.wall;
      const pct = (ms) => (ms === undefined || Number.isNaN(ms) ? null : Math.round((ms / wallMs) * 100));
      const serverEnd = serverPid ? processCpuMs(serverPid) : undefined;
      const serverUser = serverEnd && start.server ? serverEnd.user - start.server.user : undefined;
      const serverSystem = serverEnd && start.server ? serverEnd.system - start.server.system : undefined;
      const server = serverUser === undefined ? undefined : serverUser + serverSystem;
      const postgres = postgresDelta(start.postgres, postgresCpuMs());
      const benchUsage = process.cpuUsage(start.bench);
      const bench = (benchUsage.user + benchUsage.system) / 1000;
      const machine = machineBusyMs() - start.machine;
      return {
        cores: cpus().length,
        server: pct(server),
        serverSystem: pct(serverSystem),
        postgres: pct(postgres),
        loadGenerator: pct(bench),
        machine: pct(machine),
        other: pct(Math.max(0, machine - (server ?? 0) - postgres - bench)),
      };
    },
  };
}

/** Percent of one core the whole machine used over the next `ms` milliseconds (null without /proc). */
export async function machineBusy(ms = 1000) {
  if (!HAVE_PROC) return null;
  const start = machineBusyMs();
  const t = performance.now();
  await new Promise((r) => setTimeout(r, ms));
  return Math.round(((machineBusyMs() - start) / (performance.now() - t)) * 100);
}

/**
 * Waits (up to `maxWaitS`) until the machine is quiet: less than `threshold`% of one core busy over
 * a second. Returns the last reading and how long it waited. On a machine shared with other work
 * this keeps runs from starting in the middle of someone's build or test suite.
 */
export async function waitForQuiet({ maxWaitS, threshold = 25 }) {
  const started = Date.now();
  let busy = await machineBusy(1000);
  while (busy !== null && busy >= threshold && Date.now() - started < maxWaitS * 1000) busy = await machineBusy(1000);
  return { busy, waitedS: Math.round((Date.now() - started) / 1000) };
}
