import { randomBytes } from 'node:crypto';
import { isUtf8 } from 'node:buffer';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { migrationsApplied } from '../db/migrate.js';
import { accountRoutes } from '../modules/accounts/routes.js';
import { agentRoutes } from '../modules/agents/routes-agent.js';
import { agentPlatformRoutes } from '../modules/agents/routes-platform.js';
import { cryptoRoutes } from '../modules/crypto/routes.js';
import { customerRoutes } from '../modules/customers/routes.js';
import { complianceRoutes } from '../modules/compliance/routes.js';
import { customerImportRoutes } from '../modules/customer-import/routes.js';
import { invitationRoutes } from '../modules/invitations/routes.js';
import { discoveryRoutes } from '../modules/discovery/routes.js';
import { externalAccountRoutes } from '../modules/external-accounts/routes.js';
import { platformRoutes } from '../modules/platform/routes.js';
import { quoteRoutes } from '../modules/quotes/routes.js';
import { rateRoutes } from '../modules/rates/routes.js';
import { sandboxRoutes } from '../modules/sandbox/routes.js';
import { transactionRoutes } from '../modules/transactions/routes.js';
import { tokenRoutes } from '../modules/tokens/routes.js';
import { transferRoutes } from '../modules/transfers/routes.js';
import { walletRoutes } from '../modules/wallets/routes.js';
import { webhookRoutes } from '../modules/webhooks/routes.js';
import { umaProtocolRoutes, umaRoutes } from '../modules/uma/routes.js';
import type { CoreDeps, Services } from '../services.js';
import { documentAuthErrors, installAuth } from './auth.js';
import { documentCommonErrors, ErrorEnvelope } from './common-schemas.js';
import { installReadCoalescing } from './coalescing.js';
import { clientErrors, envelope, frameworkErrors, hasEmptySegment, installErrorHandling, sendError } from './errors.js';
import { settleWithin } from './deadline.js';
import { invalidInput, ServiceError } from '../core/errors.js';
import { documentIdempotencyKey, installIdempotency } from './idempotency.js';
import { installMetrics } from './metrics.js';
import { lazyRequestLogger } from './request-logger.js';
import type { Api } from './types.js';
import { buildSerializer } from './serialization.js';
import { buildValidator, documentBlankRule, documentOptionalBody, markOptionalBodies, refuseBodiesWhereNoneIsRead } from './validation.js';

export const API_VERSION = '2025-10-13';
export const API_PREFIX = `/${API_VERSION}`;

function registerApi(api: Api, services: Services): void {
  platformRoutes(api, services.platforms);
  tokenRoutes(api, services.tokens);
  customerRoutes(api, services);
  accountRoutes(api, services);
  externalAccountRoutes(api, services);
  discoveryRoutes(api, services);
  rateRoutes(api, services);
  cryptoRoutes(api, services);
  quoteRoutes(api, services);
  walletRoutes(api, services);
  webhookRoutes(api, services);
  transactionRoutes(api, services);
  sandboxRoutes(api, services);
  transferRoutes(api, services);
  umaRoutes(api, services);
  invitationRoutes(api, services);
  complianceRoutes(api, services);
  // CSV upload is multipart: its parser lives in a scope of its own.
  void api.register(async (scope) => customerImportRoutes(scope as unknown as Api, services));
  agentPlatformRoutes(api, services);
  agentRoutes(api, services);
}

/** `\u0000` in JSON text, unless its backslash is itself escaped (`\\u0000` is the text "\u0000"). */
const ESCAPED_NUL = /(?:^|[^\\])(?:\\\\)*\\u0000/;

/** A surrogate written as an escape: the only way JSON text can carry a lone one (raw bytes decode to U+FFFD). */
const ESCAPED_SURROGATE = /\\u[dD][89a-fA-F]/;
/** Half of a surrogate pair without its other half: not text, and PostgreSQL refuses it in JSON. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function holdsLoneSurrogate(value: unknown): boolean {
  if (typeof value === 'string') return LONE_SURROGATE.test(value);
  if (Array.isArray(value)) return value.some(holdsLoneSurrogate);
  if (value !== null && typeof value === 'object') return Object.entries(value).some(([key, v]) => LONE_SURROGATE.test(key) || holdsLoneSurrogate(v));
  return false;
}

/**
 * Deeper than any body of the API needs, even in its free-form objects (`senderCustomerInfo`):
 * a body thousands of levels deep overflowed the stack where it was serialized for storage.
 */
const MAX_JSON_DEPTH = 32;

function nestedDeeperThan(value: unknown, levels: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (levels === 0) return true;
  for (const item of Array.isArray(value) ? value : Object.values(value)) if (nestedDeeperThan(item, levels - 1)) return true;
  return false;
}

/** Request ids for log lines: unique across processes (a random prefix per process), cheap per request. */
function requestIds(): () => string {
  const prefix = randomBytes(6).toString('base64url');
  let sequence = 0;
  return () => `${prefix}-${(++sequence).toString(36)}`;
}

/**
 * NUL, and a query whose percent-escapes are not UTF-8 (`%FF`): as a path the router refuses
 * those, but a query parser keeps the escape as text, so a filter silently matched nothing.
 */
function urlProblem(url: string): ServiceError | undefined {
  if (url.includes('%00')) return invalidInput('url', 'the path and query must not contain NUL characters (%00)', 'format');
  const query = url.indexOf('?');
  if (query < 0 || !url.includes('%', query)) return undefined;
  try {
    decodeURIComponent(url.slice(query + 1));
    return undefined;
  } catch {
    return invalidInput('url', 'the query has a percent-escape that is not UTF-8', 'format');
  }
}

/** RFC 9112 §3.2: an HTTP/1.1 request without Host (or with an empty one) is refused, as Node would. */
const MISSING_HOST = () => new ServiceError('INVALID_INPUT', 'an HTTP/1.1 request needs a Host header', { headers: { connection: 'close' } });

/** Request bodies are read as sent: a compressed one would be parsed as if it were not. */
function encodingProblem(encoding: string | undefined): ServiceError | undefined {
  if (encoding === undefined || encoding.trim().toLowerCase() === 'identity') return undefined;
  return new ServiceError('UNSUPPORTED_MEDIA_TYPE', `request bodies are not decompressed: send them without Content-Encoding (got ${encoding.slice(0, 50)})`);
}

export async function buildHttpApp(deps: CoreDeps, services: Services, options: { logger: Logger | false }): Promise<FastifyInstance> {
  const { config } = deps;
  const untyped = Fastify({
    loggerInstance: (options.logger || undefined) as FastifyBaseLogger | undefined,
    logger: options.logger ? undefined : false,
    bodyLimit: config.bodyLimitBytes,
    // Fastify's default is no limit: a client sending a byte now and then would hold its
    // connection forever. Node only enforces the limit given when the server is constructed
    // (Fastify sets its own option afterwards), and checks connections every second here.
    requestTimeout: config.requestTimeoutMs,
    // Node answers an HTTP/1.1 request without Host with a bare 400; the hook below refuses it
    // the same way (and closes the connection), in the error envelope.
    http: { requestTimeout: config.requestTimeoutMs, connectionsCheckingInterval: 1_000, requireHostHeader: false },
    // Off unless the operator names the proxies: a forged X-Forwarded-For would pick the address that auth failures count against.
    trustProxy: config.trustProxy,
    // Per-request lines only at debug: at info they would double the logging cost of every call.
    logController: new LogController({ disableRequestLogging: config.logLevel !== 'debug' && config.logLevel !== 'trace' }),
    // Fastify's own 503 while closing has its own body; the hook below answers in the envelope.
    return503OnClosing: false,
    schemaController: { compilersFactory: { buildValidator: buildValidator as any, buildSerializer: buildSerializer as any } },
    genReqId: requestIds(),
    frameworkErrors,
    clientErrorHandler: clientErrors,
    // A pino child per request costs more than a small request's own work; build it on first use.
    ...(options.logger && { childLoggerFactory: lazyRequestLogger }),
  }).withTypeProvider<TypeBoxTypeProvider>();

  const app = untyped as unknown as FastifyInstance;
  // Node drops header lines past 2,000 without a word (an Authorization after them looked
  // missing); the 16 KiB limit on the header section bounds them anyway.
  app.server.maxHeadersCount = 0;
  app.addSchema({ ...ErrorEnvelope, $id: 'ErrorEnvelope' });
  // The API speaks JSON only (multipart is added per route where files are uploaded). An empty
  // body with a JSON content type is no body (clients send the header on DELETE too).
  app.removeContentTypeParser(['text/plain', 'application/json']);
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(request.headers['content-type'] ?? '')?.[1].toLowerCase();
    if (charset && charset !== 'utf-8' && charset !== 'utf8') return done(new ServiceError('UNSUPPORTED_MEDIA_TYPE', 'send JSON as UTF-8 (charset=utf-8, or no charset)'), undefined);
    // Decoded leniently, bytes that are not UTF-8 would be stored as U+FFFD without a word.
    if (!isUtf8(body as Buffer)) return done(invalidInput('body', 'the body is not UTF-8 text', 'encoding'), undefined);
    const text = (body as Buffer).toString('utf8');
    if (text === '') return done(null, undefined);
    if (text.includes('\\u0000') && ESCAPED_NUL.test(text)) return done(invalidInput('body', 'text must not contain NUL characters (\\u0000)', 'format'), undefined);
    parseJson(request, text, (error, value) => {
      if (error) done(error, undefined);
      else if (nestedDeeperThan(value, MAX_JSON_DEPTH)) done(invalidInput('body', `JSON must not nest objects and arrays more than ${MAX_JSON_DEPTH} deep`, 'format'), undefined);
      else if (ESCAPED_SURROGATE.test(text) && holdsLoneSurrogate(value)) done(invalidInput('body', 'text must be valid Unicode: a \\uD800–\\uDFFF escape must be half of a surrogate pair', 'format'), undefined);
      else done(null, value);
    });
  });
  // Shutting down: requests that still arrive (on kept-alive connections) are told to go elsewhere.
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  // PostgreSQL text cannot hold NUL; refused here, it would fail the query as a 500. Every
  // answer is its declared type only, and no API answer (secrets, balances) is kept by a cache.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-content-type-options', 'nosniff');
    if (closing) {
      void reply.code(503).header('connection', 'close').send(envelope('SERVICE_UNAVAILABLE', 'the server is shutting down; retry on another instance or in a moment'));
      return;
    }
    if (request.url.startsWith(API_PREFIX)) reply.header('cache-control', 'no-store');
    // Sent here, not through done(): a route's own error handler (the UMA routes' LNURL shape) would drop `Connection: close`.
    if (!request.headers.host && request.raw.httpVersion === '1.1') return void sendError(reply, MISSING_HOST());
    const problem = urlProblem(request.url) ?? encodingProblem(request.headers['content-encoding']);
    if (problem) return done(problem);
    // Before authentication, as for any unknown path.
    if (hasEmptySegment(request.params)) return void reply.callNotFound();
    done();
  });
  installErrorHandling(app);
  const metrics = installMetrics(app, deps.database);

  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Corridor — Service API',
        version: API_VERSION,
        description: 'Self-hosted implementation of the Service API. All amounts are integers in the smallest unit of their currency.',
      },
      servers: [{ url: config.publicUrl }],
      components: {
        securitySchemes: {
          BasicAuth: { type: 'http', scheme: 'basic', description: 'API token `clientId` as user name, `clientSecret` as password.' },
          AgentAuth: { type: 'http', scheme: 'bearer', description: 'Agent access token from redeeming a device code.' },
        },
      },
      security: [{ BasicAuth: [] }],
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transform: ({ schema, url, route }) => ({ schema: documentCommonErrors(documentAuthErrors(documentIdempotencyKey(documentOptionalBody(documentBlankRule(schema), route), route), route, API_PREFIX), route, API_PREFIX) as never, url }),
    transformObject: (documents) => markOptionalBodies('openapiObject' in documents ? documents.openapiObject : documents.swaggerObject),
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs' });

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  let healthy = false;
  // A database that does not answer within 2 s (down, or every connection waiting on a lock) is
  // unhealthy: the probe must not hang with the requests it reports on.
  const probeDatabase = async () => {
    healthy = healthy || (await migrationsApplied(deps.database.db));
    if (!healthy) return 'migrating';
    await deps.database.db.selectFrom('platforms').select('id').limit(1).execute();
    return 'ok';
  };
  app.get('/healthz', { schema: { hide: true } }, async (_request, reply) => {
    const status = await settleWithin(probeDatabase().catch(() => 'database unavailable'), 2_000, 'database not answering');
    if (status !== 'ok') return reply.code(503).send({ status });
    return { status, database: deps.database.kind };
  });

  // UMA protocol endpoints: outside the API prefix, authenticated by UMA signatures (docs/uma.md).
  umaProtocolRoutes(app, services.uma);

  await app.register(
    async (api) => {
      installAuth(api, { tokens: services.tokens, platforms: services.platforms, agents: () => services.agents.authenticator });
      installIdempotency(api, { database: deps.database, clock: deps.clock });
      installReadCoalescing(api, { onShared: metrics.countSharedRead });
      refuseBodiesWhereNoneIsRead(api);
      registerApi(api as unknown as Api, services);
    },
    { prefix: API_PREFIX },
  );

  return app;
}
