// Ceilings: what this machine can do at best, measured in the same run as the scenarios, each in
// its own process. Pluggable like scenarios: { key, name, unit, run(env) → result }, where result is
// { rps, latency: { p50, p99, ... }, errors, cpu?, note? } or { skipped: reason }.
//
// env: { cleanup, database, connections, duration, warmup, startNode, runLoad, cpuMeter, options }
import { fileURLToPath } from 'node:url';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));

async function helloWorld(env) {
  const server = env.startNode(env.cleanup, 'hello-world server', here('./ceilings/hello-world.mjs'), [], {
    env: { ...process.env, PORT: '0' },
  });
  try {
    const { port } = await server.message((m) => m.port);
    let meter;
    const load = await env.runLoad({
      origin: `http://127.0.0.1:${port}`,
      requests: [{ method: 'GET', path: '/' }],
      connections: env.connections,
      duration: env.duration,
      warmup: env.warmup,
      onStart: () => (meter = env.cpuMeter(server.pid)),
    });
    return { ...load, cpu: meter?.stop() };
  } finally {
    await server.stop();
  }
}

function transfer(variant) {
  return async (env) => {
    const { database } = env;
    const config = {
      variant,
      concurrency: env.connections,
      durationS: env.duration,
      warmupS: env.warmup,
      accounts: env.options.pgAccounts,
      ...(database.kind === 'postgres'
        ? { driver: 'pg', databaseUrl: database.url }
        : { driver: 'pglite', dataDir: `${env.cleanup.tempDir('corridor-bench-')}/data` }),
    };
    const child = env.startNode(env.cleanup, `transfer ceiling (${variant})`, here('./ceilings/pg-transfer.mjs'), [JSON.stringify(config)]);
    try {
      const timeoutMs = (env.duration + env.warmup + 120) * 1000;
      const outcome = child.message((m) => 'ok' in m, timeoutMs);
      outcome.catch(() => {});
      let meter;
      const measuring = child
        .message((m) => m.phase === 'measuring', timeoutMs)
        .then(() => (meter = env.cpuMeter(child.pid)))
        .catch(() => {});
      await Promise.race([measuring, outcome]);
      const result = await outcome;
      const cpu = meter?.stop();
      if (!result.ok) return { failed: result.error.split('\n')[0] };
      return {
        rps: result.tps,
        cpu,
        latency: result.latency,
        errors: result.errors,
        ...(result.firstError && { note: `first error: ${result.firstError}` }),
      };
    } finally {
      await child.stop();
    }
  };
}

/** Raw node:crypto P-256 verifications/s, one core: the ceiling of the signed-retry scenario's ops/s. */
async function p256Verify(env) {
  const config = { durationS: Math.min(env.duration, 5), warmupS: Math.min(env.warmup, 1) };
  const child = env.startNode(env.cleanup, 'P-256 verify ceiling', here('./ceilings/p256-verify.mjs'), [JSON.stringify(config)]);
  try {
    const result = await child.message((m) => 'ok' in m, (config.durationS + config.warmupS + 60) * 1000);
    if (!result.ok) return { failed: result.error.split('\n')[0] };
    return { rps: result.rps, latency: result.latency, errors: 0, note: 'one core, cached KeyObject' };
  } finally {
    await child.stop();
  }
}

export const CEILINGS = [
  {
    key: 'hello-world',
    name: 'Fastify hello-world (GET /, no logger, no hooks)',
    unit: 'req/s',
    run: helloWorld,
  },
  {
    key: 'db-transfer-transaction',
    name: 'DB transfer: BEGIN; UPDATE ×2; INSERT; COMMIT',
    unit: 'tx/s',
    run: transfer('transaction'),
  },
  {
    key: 'db-transfer-statement',
    name: 'DB transfer as one CTE statement',
    unit: 'tx/s',
    run: transfer('statement'),
  },
  {
    key: 'p256-verify',
    name: 'node:crypto P-256 signature verify (one core)',
    unit: 'verifications/s',
    run: p256Verify,
  },
];
