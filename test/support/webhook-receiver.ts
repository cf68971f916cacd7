import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock } from '../../src/core/clock.js';
import type { Database } from '../../src/db/database.js';

/** One request the receiver got, with the exact bytes of its body. */
export interface ReceivedWebhook {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  /** The body parsed as JSON (undefined when it is not JSON). */
  json: any;
  receivedAtMs: number;
}

/** How to answer one request. */
export interface ScriptedResponse {
  status?: number;
  /** An object is sent as JSON, a string as is. */
  body?: unknown;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Never answer (the connection stays open until the client gives up or the receiver closes). */
  hang?: boolean;
}

export type Responder = (request: ReceivedWebhook, index: number) => ScriptedResponse;

export interface WebhookReceiver {
  /** Base URL, e.g. http://127.0.0.1:40123/hooks. */
  url: string;
  requests: ReceivedWebhook[];
  /** Requests being answered right now, and the most there ever were at once. */
  inFlight: number;
  maxInFlight: number;
  /** Queues answers for the next requests, in order; once used up the default answers. */
  respondWith(...responses: ScriptedResponse[]): void;
  /** Answers every request without a queued answer (default: 200 with an empty JSON object). */
  setDefault(responder: ScriptedResponse | Responder): void;
  /** Resolves when at least `count` requests have arrived. */
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  /** Forgets requests and scripted answers. */
  reset(): void;
  close(): Promise<void>;
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

function parseJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** A loopback HTTP server standing in for a platform's webhook endpoint. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const queued: ScriptedResponse[] = [];
  let fallback: Responder = () => ({ status: 200, body: {} });
  const waiters: Array<{ count: number; resolve: () => void }> = [];

  const receiver: WebhookReceiver = {
    url: '',
    requests: [],
    inFlight: 0,
    maxInFlight: 0,
    respondWith: (...responses) => void queued.push(...responses),
    setDefault: (responder) => {
      fallback = typeof responder === 'function' ? responder : () => responder;
    },
    waitForRequests(count, timeoutMs = 30_000) {
      if (receiver.requests.length >= count) return Promise.resolve(receiver.requests);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`expected ${count} webhook requests, got ${receiver.requests.length}`)), timeoutMs);
        waiters.push({ count, resolve: () => (clearTimeout(timer), resolve(receiver.requests)) });
      });
    },
    reset() {
      receiver.requests = [];
      receiver.maxInFlight = 0;
      queued.length = 0;
      fallback = () => ({ status: 200, body: {} });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  async function handle(request: IncomingMessage, response: ServerResponse) {
    receiver.inFlight++;
    receiver.maxInFlight = Math.max(receiver.maxInFlight, receiver.inFlight);
    // 'close' fires once the answer is sent or the client gave up, so a hanging request stays counted.
    response.on('close', () => receiver.inFlight--);
    const rawBody = await readBody(request);
    const received: ReceivedWebhook = {
      method: request.method ?? '',
      path: request.url ?? '',
      headers: request.headers,
      rawBody,
      json: parseJson(rawBody),
      receivedAtMs: Date.now(),
    };
    const index = receiver.requests.push(received) - 1;
    for (const waiter of waiters.filter((w) => receiver.requests.length >= w.count)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
    const script = queued.shift() ?? fallback(received, index);
    if (script.hang) return;
    if (script.delayMs) await new Promise((resolve) => setTimeout(resolve, script.delayMs));
    if (response.destroyed) return;
    const body = script.body === undefined ? '' : typeof script.body === 'string' ? script.body : JSON.stringify(script.body);
    response.writeHead(script.status ?? 200, typeof script.body === 'string' ? {} : { 'content-type': 'application/json' });
    response.end(body);
  }

  const server = createServer((request, response) => {
    handle(request, response).catch(() => response.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}

/** The system clock moved `offsetMs` ahead: lets a test reach lease ends and retry times without waiting. */
export function clockAhead(offsetMs: number): Clock {
  return {
    realNowMs: () => Date.now() + offsetMs,
    now: (subject) => new Date(Date.now() + offsetMs + (subject?.clockOffsetMs ?? 0)),
  };
}

/** An outbox row, to check its delivery state. */
export function outboxRow(database: Database, eventId: string) {
  return database.db.selectFrom('events').selectAll().where('id', '=', eventId).executeTakeFirstOrThrow();
}
