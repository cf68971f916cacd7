import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * False for a GET that changes something, so that every call runs on its own. Other
     * authenticated GETs answer with their return value and may share a run (installReadCoalescing).
     */
    coalesce?: boolean;
  }
}

/**
 * What a run produced: the serialized response (encoded once, not once per reply), the error it
 * threw, or nothing to share (the handler sent its own reply): each follower then runs on its own.
 */
type Outcome = { status: number; payload: Buffer } | { error: unknown } | { alone: true };

/** One run of a read, shared by every identical request that arrived before it started. */
interface Flight {
  /** Resolves when the flight may start (at once for the first flight of a lane). */
  started: Promise<void>;
  start(): void;
  outcome: Promise<Outcome>;
  settle(outcome: Outcome): void;
}

/** Identical reads of one caller: at most one running, and one gathering the requests behind it. */
interface Lane {
  running?: Flight;
  next?: Flight;
}

function newFlight(): Flight {
  let start!: () => void;
  let settle!: (outcome: Outcome) => void;
  const started = new Promise<void>((resolve) => (start = resolve));
  const outcome = new Promise<Outcome>((resolve) => (settle = resolve));
  return { started, start, outcome, settle };
}

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Read coalescing for authenticated GET routes (unless marked `coalesce: false`). Identical GETs of
 * one caller (same platform, same agent or platform token, same URL) that arrive while that read is
 * running wait for it to finish; then one run serves all of them, each getting a copy of its
 * response (or its error).
 *
 * The answer stays exact: a request only shares a run that started after the request arrived, so
 * every write acknowledged before it reached the server is in what it reads, the answer it would
 * have got alone. What a request brought with it from authentication is its platform (settings,
 * test clock), so requests share only with holders of the same platform snapshot: a request that
 * authenticated after PATCH /config or a clock advance never gets an answer built on the old one.
 * A lone request never waits. Under load, requests for the same page queue here instead of in the
 * database pool, and cost one query and one serialization per batch.
 */
export function installReadCoalescing(app: FastifyInstance, options: { onShared?: (route: string) => void } = {}): void {
  // Per platform snapshot (the object authentication attached), then per caller and URL.
  const lanesOf = new WeakMap<object, Map<string, Lane>>();

  function finish(lanes: Map<string, Lane>, key: string, lane: Lane, flight: Flight, outcome: Outcome): void {
    flight.settle(outcome);
    lane.running = lane.next;
    lane.next = undefined;
    if (lane.running) lane.running.start();
    else lanes.delete(key);
  }

  function laneKey(request: FastifyRequest): string {
    const principal = request.principal.kind === 'agent' ? `agent:${request.principal.agentId}` : 'platform';
    return `${principal}\n${request.method} ${request.url}`;
  }

  function answer(reply: FastifyReply, outcome: Exclude<Outcome, { alone: true }>): FastifyReply {
    if ('error' in outcome) throw outcome.error;
    return reply.code(outcome.status).type(JSON_TYPE).send(outcome.payload);
  }

  async function run(handler: RouteHandlerMethod, self: FastifyInstance, request: FastifyRequest, reply: FastifyReply): Promise<Outcome> {
    try {
      const value = await handler.call(self, request, reply);
      if (reply.sent) return { alone: true };
      return { status: reply.statusCode, payload: Buffer.from(reply.serialize(value) as string) };
    } catch (error) {
      return { error };
    }
  }

  function coalesced(handler: RouteHandlerMethod): RouteHandlerMethod {
    const wrapped: RouteHandlerMethod = async function (this: FastifyInstance, request, reply) {
      let lanes = lanesOf.get(request.platform);
      if (!lanes) lanesOf.set(request.platform, (lanes = new Map()));
      const key = laneKey(request);
      let lane = lanes.get(key);
      if (!lane) lanes.set(key, (lane = {}));
      if (lane.next) {
        const shared = await lane.next.outcome;
        if ('alone' in shared) return handler.call(this, request, reply);
        options.onShared?.(request.routeOptions.url ?? request.url);
        return answer(reply, shared);
      }
      const flight = newFlight();
      if (lane.running) {
        lane.next = flight;
        await flight.started;
      } else lane.running = flight;
      const outcome = await run(handler, this, request, reply);
      finish(lanes, key, lane, flight, outcome);
      return 'alone' in outcome ? reply : answer(reply, outcome);
    };
    coalescedHandlers.add(wrapped);
    return wrapped;
  }

  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat();
    if (route.config?.coalesce === false || route.config?.auth === 'none' || coalescedHandlers.has(route.handler)) return;
    if (methods.length === 1 && methods[0] === 'GET') route.handler = coalesced(route.handler);
  });
}

/** Handlers already wrapped (Fastify derives a HEAD route from each GET with the same handler). */
const coalescedHandlers = new WeakSet<RouteHandlerMethod>();
