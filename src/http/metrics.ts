import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Database } from '../db/database.js';
import { transact } from '../db/transact.js';
import { settleWithin } from './deadline.js';

/**
 * Backlogs an operator should watch, read when /metrics is scraped: jobs that ran out of
 * attempts (a payment step that will not happen on its own), jobs overdue, and webhooks waiting
 * or given up.
 */
function installBacklogGauges(registry: Registry, database: Database): void {
  // One read per scrape, shared by both gauges, given up after 2.5 s: a scrape must answer while
  // the database is down or locked, which is when it matters most.
  let inFlight: Promise<Backlog | undefined> | undefined;
  const read = () =>
    (inFlight ??= settleWithin<Backlog | undefined>(readBacklog(database), 2_500, undefined).finally(() => {
      inFlight = undefined;
    }));
  new Gauge({
    name: 'corridor_backlog',
    help: 'Work waiting or stuck: dead_jobs, overdue_jobs (due over a minute ago), pending_webhooks, failed_webhooks.',
    labelNames: ['kind'],
    registers: [registry],
    async collect() {
      const row = await read();
      if (!row) return; // keeps the last values
      this.set({ kind: 'dead_jobs' }, row.dead);
      this.set({ kind: 'overdue_jobs' }, row.overdue);
      this.set({ kind: 'pending_webhooks' }, row.pending);
      this.set({ kind: 'failed_webhooks' }, row.failed);
    },
  });
  new Gauge({
    name: 'corridor_database_up',
    help: '1 when this scrape read the backlog from the database within 2.5 s, else 0 (the backlog then keeps its last values).',
    registers: [registry],
    async collect() {
      this.set((await read()) ? 1 : 0);
    },
  });
}

interface Backlog {
  dead: number;
  overdue: number;
  pending: number;
  failed: number;
}

async function readBacklog(database: Database) {
  return transact(database.db, async (trx) => {
    await sql`set local statement_timeout = 2000`.execute(trx);
    const { rows } = await sql<Backlog>`
      select (select count(*) from jobs where dead_at is not null)::int as dead,
             (select count(*) from jobs where dead_at is null and due_at < now() - interval '1 minute')::int as overdue,
             (select count(*) from events where delivery_state = 'PENDING')::int as pending,
             (select count(*) from events where delivery_state = 'FAILED')::int as failed`.execute(trx);
    return rows[0];
  });
}

/**
 * Labelled children of a metric found by a string key: prom-client would otherwise sort and hash
 * the label object on every response. Keys are bounded by the route table.
 */
function childCache<C>(): (key: string, make: () => C) => C {
  const children = new Map<string, C>();
  return (key, make) => {
    let child = children.get(key);
    if (!child) children.set(key, (child = make()));
    return child;
  };
}

export interface HttpMetrics {
  /** Counts a request answered with the response of an identical request's run (src/http/coalescing.ts). */
  countSharedRead(route: string): void;
}

/** Prometheus metrics at GET /metrics: process defaults, per-route request counts and latency, backlogs. */
export function installMetrics(app: FastifyInstance, database: Database): HttpMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'corridor_' });
  installBacklogGauges(registry, database);
  const duration = new Histogram({
    name: 'corridor_http_request_duration_seconds',
    help: 'HTTP request latency by route and status class.',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const errorsTotal = new Counter({
    name: 'corridor_http_errors_total',
    help: 'Responses with a 5xx status, by route.',
    labelNames: ['method', 'route'],
    registers: [registry],
  });

  const sharedReads = new Counter({
    name: 'corridor_http_shared_reads_total',
    help: 'GET requests answered with the run of an identical request that arrived before it started, by route.',
    labelNames: ['route'],
    registers: [registry],
  });
  const sharedReadCounter = childCache<{ inc(): void }>();
  const observer = childCache<{ observe(seconds: number): void }>();

  app.addHook('onResponse', (request, reply, done) => {
    const method = request.method;
    const route = request.routeOptions.url ?? 'unmatched';
    const status = `${Math.floor(reply.statusCode / 100)}xx`;
    observer(`${method} ${route} ${status}`, () => duration.labels({ method, route, status })).observe(reply.elapsedTime / 1000);
    if (reply.statusCode >= 500) errorsTotal.inc({ method, route });
    done();
  });

  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    reply.header('content-type', registry.contentType);
    return registry.metrics();
  });
  return {
    countSharedRead: (route) => sharedReadCounter(route, () => sharedReads.labels({ route })).inc(),
  };
}
