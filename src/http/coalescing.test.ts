import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Platform } from '../modules/platform/service.js';
import { installReadCoalescing } from './coalescing.js';

// The mechanism on a bare Fastify app whose handler the test holds open, so the order of arrivals
// and runs is decided here, not by timing. test/coalescing.test.ts runs it in the real app.

/** A read whose runs the test starts and finishes one at a time. */
class HeldRead {
  runs = 0;
  private waiting: Array<(value: unknown) => void> = [];

  async handle(): Promise<unknown> {
    this.runs++;
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Ends the oldest run still open with `value` (an Error is thrown from the handler). */
  finish(value: unknown): void {
    const resolve = this.waiting.shift();
    if (!resolve) throw new Error('no run is open');
    resolve(value);
  }

  get open(): number {
    return this.waiting.length;
  }
}

let app: FastifyInstance;
let read: HeldRead;
let shared: string[];
let platforms: Map<string, Platform>;

/** Lets queued promise callbacks and the injected requests' I/O run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

beforeEach(async () => {
  read = new HeldRead();
  shared = [];
  app = Fastify();
  // Stand-in for the auth hook and its platform cache: the platform and caller come from headers.
  platforms = new Map();
  app.addHook('onRequest', async (request) => {
    const id = String(request.headers['x-platform'] ?? 'P1');
    if (!platforms.has(id)) platforms.set(id, { id } as Platform);
    request.platform = platforms.get(id)!;
    const agent = request.headers['x-agent'];
    request.principal = agent ? { kind: 'agent', agentId: String(agent), customerId: 'C' } : { kind: 'token', tokenId: 'T', permissions: ['VIEW'] };
  });
  installReadCoalescing(app, { onShared: (route) => shared.push(route) });
  const response = { 200: { type: 'object', properties: { value: { type: 'integer' } } } };
  const handler = async () => {
    const value = await read.handle();
    if (value instanceof Error) throw Object.assign(value, { statusCode: 409 });
    return { value, dropped: 'not in the schema' };
  };
  app.get('/thing', { schema: { response } }, handler);
  app.get('/own', { schema: { response }, config: { coalesce: false } }, handler);
  app.get('/sends', { schema: { response } }, async (_request, reply) => reply.send({ value: await read.handle() }));
  app.get('/open', { schema: { response }, config: { auth: 'none' } }, handler);
  await app.ready();
});
afterEach(() => app.close());

function get(url: string, headers: Record<string, string> = {}) {
  return app.inject({ method: 'GET', url, headers }).then((r) => ({ status: r.statusCode, body: r.json() }));
}

/** Starts a read of `url`, then `count` identical requests that arrive while it runs. */
async function queueBehindRun(url: string, count: number) {
  const first = get(url);
  await settle();
  const later = Array.from({ length: count }, () => get(url));
  await settle();
  return { first, later };
}

describe('read coalescing', () => {
  it('runs a lone request at once, serialized by the route schema', async () => {
    const response = get('/thing');
    await settle();
    expect(read.runs).toBe(1);
    read.finish(1);
    expect(await response).toEqual({ status: 200, body: { value: 1 } });
    expect(shared).toEqual([]);
  });

  it('never hands a request the result of a run that started before it arrived', async () => {
    const { first, later } = await queueBehindRun('/thing', 3);
    expect(read.runs).toBe(1); // the later ones wait for the running read instead of joining it

    read.finish(1); // written before the later requests arrived: they must not see it
    await settle();
    expect(read.runs).toBe(2); // one run for all three
    read.finish(2);

    expect(await first).toEqual({ status: 200, body: { value: 1 } });
    for (const response of await Promise.all(later)) expect(response).toEqual({ status: 200, body: { value: 2 } });
    expect(shared).toEqual(['/thing', '/thing']); // two followers; the third one ran the read
    expect(read.open).toBe(0);
  });

  it('keeps callers apart: other platforms, agents and URLs run their own reads', async () => {
    const base = get('/thing');
    await settle();
    const others = [
      get('/thing', { 'x-platform': 'P2' }),
      get('/thing', { 'x-agent': 'Agent:1' }),
      get('/thing?limit=5'),
    ];
    await settle();
    expect(read.runs).toBe(4);
    for (let i = 1; i <= 4; i++) read.finish(i);
    const values = [await base, ...(await Promise.all(others))].map((r) => r.body.value);
    expect(values).toEqual([1, 2, 3, 4]);
    expect(shared).toEqual([]);
  });

  it('shares only within one platform snapshot: a request after a settings change reads for itself', async () => {
    const { first, later: [before] } = await queueBehindRun('/thing', 1);
    platforms.set('P1', { id: 'P1' } as Platform); // PATCH /config or a clock advance replaced it
    const after = get('/thing');
    await settle();
    expect(read.runs).toBe(2); // the new snapshot has nothing running: it reads at once
    read.finish(1);
    await settle();
    expect(read.runs).toBe(3); // the old snapshot's waiting request, after the first run
    read.finish(2);
    read.finish(3);
    expect([await first, await after, await before].map((r) => r.body.value)).toEqual([1, 2, 3]);
    expect(shared).toEqual([]);
  });

  it('gives every follower the error of the run they shared, and the next request a fresh run', async () => {
    const { first, later: followers } = await queueBehindRun('/thing', 2);
    read.finish(1);
    await settle();
    read.finish(new Error('conflict'));
    expect((await first).status).toBe(200);
    for (const response of await Promise.all(followers)) expect(response.status).toBe(409);

    const after = get('/thing');
    await settle();
    expect(read.runs).toBe(3);
    read.finish(3);
    expect(await after).toEqual({ status: 200, body: { value: 3 } });
  });

  it('lets followers run on their own when the run sent its own reply (nothing to copy)', async () => {
    const { first, later } = await queueBehindRun('/sends', 2);
    read.finish(1);
    await settle();
    expect(read.runs).toBe(2); // one of the later two leads the next run
    read.finish(2);
    await settle();
    expect(read.runs).toBe(3); // its follower could not be given a copy, so it read for itself
    read.finish(3);
    expect((await first).body.value).toBe(1);
    expect((await Promise.all(later)).map((r) => r.body.value).sort()).toEqual([2, 3]);
    expect(shared).toEqual([]);
  });

  it('leaves alone routes marked coalesce: false and routes without a caller', async () => {
    for (const url of ['/own', '/open']) {
      const before = read.runs;
      const responses = [get(url), get(url), get(url)];
      await settle();
      expect(read.runs - before).toBe(3);
      for (let i = 0; i < 3; i++) read.finish(i);
      expect((await Promise.all(responses)).map((r) => r.body.value)).toEqual([0, 1, 2]);
    }
    expect(shared).toEqual([]);
  });
});
