import { connect } from 'node:net';
import { Writable } from 'node:stream';
import type { InjectOptions } from 'fastify';
import { createPlatformWithToken } from '../../src/bootstrap.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { Clock } from '../../src/core/clock.js';
import { createCorridor, type Corridor } from '../../src/corridor.js';
import type { Platform } from '../../src/modules/platform/service.js';
import { API_PREFIX } from '../../src/http/app.js';
import { sharedTestDatabase } from './db.js';
import { checkAgainstReference, referenceDocument, webhookProblems } from './reference-check.js';

export interface Credentials {
  clientId: string;
  clientSecret: string;
}

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Record<string, string | string[] | number | undefined>;
}

export interface ApiClient {
  credentials?: Credentials;
  request<T = any>(options: {
    method: NonNullable<InjectOptions['method']>;
    path: string;
    body?: unknown;
    query?: Record<string, string | number | boolean | string[] | undefined>;
    headers?: Record<string, string>;
    /** The caller's address (default 127.0.0.1), for what is counted per address. */
    remoteAddress?: string;
  }): Promise<ApiResponse<T>>;
  get<T = any>(path: string, query?: Record<string, string | number | boolean | string[] | undefined>): Promise<ApiResponse<T>>;
  post<T = any>(path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse<T>>;
  patch<T = any>(path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse<T>>;
  put<T = any>(path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse<T>>;
  delete<T = any>(path: string, headers?: Record<string, string>): Promise<ApiResponse<T>>;
}

export function basicAuth(credentials: Credentials): string {
  return `Basic ${Buffer.from(`${credentials.clientId}:${credentials.clientSecret}`).toString('base64')}`;
}

function toQuery(query?: Record<string, string | number | boolean | string[] | undefined>) {
  if (!query) return undefined;
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(query)) if (v !== undefined) out[k] = Array.isArray(v) ? v : String(v);
  return out;
}

const OUTSIDE_API = ['/healthz', '/metrics', '/docs', '/openapi.json', '/.well-known', '/dashboard', API_PREFIX];

function isOutsideApi(path: string): boolean {
  return OUTSIDE_API.some((prefix) => path === prefix || path.startsWith(`${prefix}/`) || path.startsWith(`${prefix}?`));
}

/** A client that sends requests to the app in-process (app.inject); paths are relative to the API prefix. */
export function apiClient(corridor: Corridor, auth?: Credentials | { bearer: string } | null): ApiClient {
  const authorization = !auth ? undefined : 'bearer' in auth ? `Bearer ${auth.bearer}` : basicAuth(auth);
  const client: ApiClient = {
    credentials: auth && !('bearer' in auth) ? auth : undefined,
    async request({ method, path, body, query, headers, remoteAddress }) {
      const response = await corridor.app.inject({
        method,
        remoteAddress,
        url: isOutsideApi(path) ? path : `${API_PREFIX}${path}`,
        query: toQuery(query),
        headers: { ...(authorization && { authorization }), ...headers },
        ...(body !== undefined && { payload: body as any }),
      });
      const text = response.body;
      let parsed: unknown = text;
      if ((response.headers['content-type'] ?? '').toString().includes('json') && text.length > 0) parsed = JSON.parse(text);
      if (!isOutsideApi(path)) checkAgainstReference(method, path, response.statusCode, parsed);
      return { status: response.statusCode, body: parsed as any, headers: response.headers };
    },
    get: (path, query) => client.request({ method: 'GET', path, query }),
    post: (path, body, headers) => client.request({ method: 'POST', path, body: body ?? {}, headers }),
    patch: (path, body, headers) => client.request({ method: 'PATCH', path, body: body ?? {}, headers }),
    put: (path, body, headers) => client.request({ method: 'PUT', path, body: body ?? {}, headers }),
    delete: (path, headers) => client.request({ method: 'DELETE', path, headers }),
  };
  return client;
}

export interface TestPlatform {
  platform: Platform;
  credentials: Credentials;
  api: ApiClient;
}

export interface TestApp {
  corridor: Corridor;
  /** Log lines written so far (JSON strings). */
  logs: string[];
  /** A fresh platform with an all-permissions token. */
  createPlatform(options?: { mode?: 'SANDBOX' | 'PRODUCTION'; name?: string; regulated?: boolean; currencies?: string[] }): Promise<TestPlatform>;
  anonymous: ApiClient;
  close(): Promise<void>;
}

/** The wallet key of test servers (any 32 bytes but the development key's). */
const TEST_WALLET_KEY = '7465'.repeat(16);

export function testConfig(overrides: Partial<Config> = {}): Config {
  // Tests run UMA counterparties on loopback, which production configurations refuse to call, and
  // make production wallets, which the development wallet key may not protect.
  const env = { LOG_LEVEL: 'info', DATA_DIR: 'memory', UMA_ALLOW_PRIVATE_COUNTERPARTIES: 'true', WALLET_ENCRYPTION_KEY: TEST_WALLET_KEY };
  return { ...loadConfig({ ...env, DOCUMENTS_DIR: process.env.CORRIDOR_TEST_DOCUMENTS_DIR }), ...overrides };
}

/**
 * The system clock, except that its real time can be held still: a process given it keeps what it
 * caches for a second of real time (the platform, with its test-clock offset) for as long as the
 * clock is held, however slow the machine. `skip` moves real time ahead instead, so what a
 * process remembers for some seconds is forgotten without waiting.
 */
export function holdableClock() {
  let heldAtMs: number | undefined;
  let skippedMs = 0;
  const realNowMs = () => (heldAtMs ?? Date.now()) + skippedMs;
  const clock: Clock = { realNowMs, now: (subject) => new Date(realNowMs() + (subject?.clockOffsetMs ?? 0)) };
  return {
    clock,
    hold: () => void (heldAtMs = Date.now()),
    release: () => void (heldAtMs = undefined),
    skip: (ms: number) => void (skippedMs += ms),
  };
}

/**
 * Builds the real app on this worker's shared database. On close, every event of the platforms it
 * created is checked against the production API's webhook schemas (support/reference-check.ts),
 * unless the file emits made-up events to test delivery itself (`madeUpEvents`).
 */
export async function startTestApp(overrides: Partial<Config> = {}, options: { madeUpEvents?: boolean; clock?: Clock } = {}): Promise<TestApp> {
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      if (logs.length < 100_000) logs.push(chunk.toString());
      done();
    },
  });
  const corridor = await createCorridor({ config: testConfig(overrides), database: await sharedTestDatabase(), logDestination: sink, clock: options.clock });
  await corridor.app.ready();
  let counter = 0;
  const platformIds: string[] = [];
  return {
    corridor,
    logs,
    anonymous: apiClient(corridor, null),
    async createPlatform(options = {}) {
      const { platform, token } = await createPlatformWithToken(
        corridor.services,
        {
          name: options.name ?? `Test platform ${++counter}`,
          mode: options.mode ?? 'SANDBOX',
          isRegulatedFinancialInstitution: options.regulated ?? true,
          currencies: options.currencies,
        },
        corridor.database,
      );
      platformIds.push(platform.id);
      const credentials = { clientId: token.clientId, clientSecret: token.clientSecret! };
      return { platform, credentials, api: apiClient(corridor, credentials) };
    },
    async close() {
      const problems = options.madeUpEvents ? [] : await eventProblems(corridor, platformIds);
      await corridor.close();
      if (problems.length > 0) throw new Error(`events a webhook client of the production API could not parse:\n  ${problems.join('\n  ')}`);
    },
  };
}

/** What the reference's webhook schemas find wrong with the events of these platforms, as delivered. */
async function eventProblems(corridor: Corridor, platformIds: string[]): Promise<string[]> {
  if (!referenceDocument || platformIds.length === 0) return [];
  const rows = await corridor.database.db.selectFrom('events').select(['id', 'type', 'data', 'created_at']).where('platform_id', 'in', platformIds).execute();
  const envelopes = rows.map((e) => ({ id: e.id, type: e.type, timestamp: e.created_at.toISOString(), data: e.data }));
  return envelopes.map(webhookProblems).filter((p): p is string => p !== undefined);
}

/**
 * Sends `request` as raw bytes on a new connection to `t`'s server (listening on a free port
 * first if it is not yet) and resolves to everything it answers once the connection closes: for
 * requests no HTTP client would send.
 */
export async function rawExchange(t: TestApp, request: string): Promise<string> {
  const { server } = t.corridor.app;
  if (!server.listening) await t.corridor.app.listen({ host: '127.0.0.1', port: 0 });
  return new Promise<string>((resolve) => {
    const socket = connect((server.address() as { port: number }).port, '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('close', () => resolve(answer));
    socket.on('error', () => {});
    socket.write(request);
  });
}
