import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLIENT_ID_PATTERN } from './core/secrets.js';
import { ACCEPTED_FORMS, parseConnectionUrl } from './db/connection-url.js';

/**
 * Environment → typed, validated configuration. Every variable is checked at start; a bad value
 * throws a ConfigError naming the variable so `corridor start` can exit non-zero with a clear line.
 */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
const LOG_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export interface Config {
  port: number;
  host: string;
  /** PostgreSQL connection string; undefined means the embedded PGlite database. */
  databaseUrl?: string;
  /** Directory for the PGlite data and uploaded files; `memory` keeps PGlite in memory. */
  dataDir: string;
  logLevel: LogLevel;
  /** Both set: start-up ensures a sandbox platform authenticated by exactly these credentials. */
  sandboxTokenId?: string;
  sandboxClientSecret?: string;
  /** Public base URL used in links Corridor hands out (defaults to http://HOST:PORT). */
  publicUrl: string;
  /** Maximum request body size in bytes. */
  bodyLimitBytes: number;
  /** Longest a client may take to send a whole request (headers and body); then 408 and the connection closes. */
  requestTimeoutMs: number;
  /**
   * Longest a graceful stop (SIGTERM, SIGINT, SIGHUP) waits for requests, webhook tries and the
   * job round in flight; then the connections still open are closed and the rest is cut off.
   */
  shutdownTimeoutMs: number;
  /** Lifetime of a quote before it expires. */
  quoteLifetimeSeconds: number;
  /** Size of the PostgreSQL connection pool. */
  dbPoolSize: number;
  /** Days a delivered, skipped or failed webhook event is kept in the outbox. */
  eventRetentionDays: number;
  /** Webhook tries in flight per process, and of those at most this many to one platform. */
  webhookConcurrency: number;
  webhookPlatformConcurrency: number;
  /** Whether this process runs the background workers (jobs, webhook delivery). */
  runWorkers: boolean;
  /** SMTP server for one-time-password emails (smtp: or smtps: URL); unset: the dev outbox. */
  smtpUrl?: string;
  /** Sender address of one-time-password emails. */
  smtpFrom: string;
  /** Lifetime of an embedded-wallet session. */
  sessionLifetimeSeconds: number;
  /** 32-byte key (64 hex characters) that encrypts wallet secrets at rest; unset: a development key. */
  walletEncryptionKey?: string;
  /** Domain of the sandbox's simulated UMA counterparties (`$success.usd@…`); lower case, optionally with a port. */
  sandboxUmaDomain: string;
  /** Let UMA counterparty calls reach loopback and private addresses (local development only). */
  umaAllowPrivateCounterparties: boolean;
  /** Longest one call to another UMA provider may take, its answer included. */
  umaCounterpartyTimeoutMs: number;
  /** Most calls to other UMA providers in flight in this process (half of them at most to check unsolicited messages). */
  umaCounterpartyConcurrency: number;
  /** Let production platforms' webhook endpoints be loopback or private addresses (an internal receiver). */
  webhookAllowPrivateEndpoints: boolean;
  /** Let production platforms' OIDC issuers and their JWKS be on loopback or private addresses (an internal identity provider). */
  oidcAllowPrivateIssuers: boolean;
  /** Where uploaded verification documents are stored (DOCUMENTS_DIR, else DATA_DIR/documents; a temp dir when DATA_DIR=memory). */
  documentsDir: string;
  /** Largest accepted verification document file. */
  documentMaxBytes: number;
  /** Most documents one customer (with its beneficial owners) may hold. */
  documentsPerCustomer: number;
  /** Most bytes of documents one platform may store. */
  documentStoragePerPlatform: number;
  /** Largest accepted bulk customer CSV file. */
  bulkImportMaxBytes: number;
  /** Most data rows in one bulk customer CSV file. */
  bulkImportMaxRows: number;
  /** The operator's hosted KYC page that `GET /customers/kyc-link` links to; unset: `<PUBLIC_URL>/kyc`. */
  kycLinkUrl?: string;
  /** Which proxies' X-Forwarded-For to believe for the client's address (TRUST_PROXY); false: none. */
  trustProxy: boolean | string[];
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be an integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

/** `false`, `true` (every proxy), or a comma-separated list of proxy addresses or CIDR ranges. */
function trustProxy(env: Env, name: string): boolean | string[] {
  const raw = env[name]?.trim();
  if (!raw || raw.toLowerCase() === 'false') return false;
  if (raw.toLowerCase() === 'true') return true;
  const entries = raw.split(',').map((entry) => entry.trim());
  const bad = entries.find((entry) => {
    const [address, prefix, extra] = entry.split('/');
    const maxPrefix = isIP(address) === 6 ? 128 : 32;
    return extra !== undefined || !isIP(address) || (prefix !== undefined && !(/^\d{1,3}$/.test(prefix) && Number(prefix) <= maxPrefix));
  });
  if (bad !== undefined) throw new ConfigError(name, `must be true, false, or addresses / CIDR ranges separated by commas, got "${bad}"`);
  return entries;
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, 'must be a valid URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got ${parsed.protocol}`);
  }
  return raw;
}

/**
 * A PostgreSQL connection URL in a form node-postgres reads (src/db/connection-url.ts), Unix
 * sockets included: `postgres://user@/database?host=/var/run/postgresql` is no WHATWG URL.
 */
function databaseUrl(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const parsed = parseConnectionUrl(raw);
  if (!parsed) throw new ConfigError(name, `must be a PostgreSQL connection URL: ${ACCEPTED_FORMS}`);
  const { protocol } = parsed.url;
  if (!['postgres:', 'postgresql:', 'socket:'].includes(protocol)) throw new ConfigError(name, `must use postgres: or postgresql: (or socket: for a Unix socket), got ${protocol}`);
  return raw;
}

function emailAddress(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^[^<>@\s]+@[^<>@\s]+$|^[^<>]*<[^<>@\s]+@[^<>@\s]+>$/.test(raw.trim())) {
    throw new ConfigError(name, `must be an email address, optionally as "Name <address>", got "${raw}"`);
  }
  return raw.trim();
}

function domainName(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw.length > 253 || !/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?$/i.test(raw)) {
    throw new ConfigError(name, `must be a domain name, optionally with a port (e.g. sandbox.uma.money), got "${raw}"`);
  }
  return raw.toLowerCase();
}

function hexKey(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!/^[0-9a-fA-F]{64}$/.test(raw)) throw new ConfigError(name, 'must be 64 hex characters (a 32-byte key)');
  return raw.toLowerCase();
}

export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  if (!/^[A-Za-z0-9.:\-[\]]+$/.test(host)) throw new ConfigError('HOST', `is not a host name or address: "${host}"`);

  const logLevel = (env.LOG_LEVEL || 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}, got "${env.LOG_LEVEL}"`);
  }

  const sandboxTokenId = env.SERVICE_SANDBOX_TOKEN_ID || undefined;
  const sandboxClientSecret = env.SERVICE_SANDBOX_CLIENT_SECRET || undefined;
  if (Boolean(sandboxTokenId) !== Boolean(sandboxClientSecret)) {
    const missing = sandboxTokenId ? 'SERVICE_SANDBOX_CLIENT_SECRET' : 'SERVICE_SANDBOX_TOKEN_ID';
    throw new ConfigError(missing, 'must be set together with the other SERVICE_SANDBOX_* variable');
  }
  if (sandboxTokenId && !CLIENT_ID_PATTERN.test(sandboxTokenId)) {
    throw new ConfigError('SERVICE_SANDBOX_TOKEN_ID', 'must be 8-128 characters of letters, digits, . _ ~ -');
  }
  if (sandboxClientSecret && sandboxClientSecret.length < 16) {
    throw new ConfigError('SERVICE_SANDBOX_CLIENT_SECRET', 'must be at least 16 characters');
  }

  const webhookConcurrency = integer(env, 'WEBHOOK_CONCURRENCY', 32, 1, 1000);
  const webhookPlatformConcurrency = integer(env, 'WEBHOOK_PLATFORM_CONCURRENCY', Math.min(16, webhookConcurrency), 1, 1000);
  if (webhookPlatformConcurrency > webhookConcurrency) {
    throw new ConfigError('WEBHOOK_PLATFORM_CONCURRENCY', `must not exceed WEBHOOK_CONCURRENCY (${webhookConcurrency})`);
  }
  const documentMaxBytes = integer(env, 'DOCUMENT_MAX_BYTES', 10 * 1_048_576, 1024, 100 * 1_048_576);
  const documentStoragePerPlatform = integer(env, 'DOCUMENT_STORAGE_PER_PLATFORM', 10 * 1024 * 1_048_576, 1_048_576, 2 ** 50);
  if (documentStoragePerPlatform < documentMaxBytes) {
    throw new ConfigError('DOCUMENT_STORAGE_PER_PLATFORM', `must be at least DOCUMENT_MAX_BYTES (${documentMaxBytes}), or no file of the largest size could be stored`);
  }

  const dataDir = env.DATA_DIR || './data';
  const publicUrl = url(env, 'PUBLIC_URL', ['http:', 'https:']) ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  return {
    port,
    host,
    databaseUrl: databaseUrl(env, 'DATABASE_URL'),
    dataDir,
    logLevel,
    sandboxTokenId,
    sandboxClientSecret,
    publicUrl: publicUrl.replace(/\/$/, ''),
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 1_048_576, 1024, 64 * 1_048_576),
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 60_000, 1_000, 600_000),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 30_000, 0, 600_000),
    quoteLifetimeSeconds: integer(env, 'QUOTE_LIFETIME_SECONDS', 300, 10, 3600),
    dbPoolSize: integer(env, 'DB_POOL_SIZE', 10, 1, 200),
    runWorkers: boolean(env, 'RUN_WORKERS', true),
    eventRetentionDays: integer(env, 'EVENT_RETENTION_DAYS', 30, 1, 3650),
    webhookConcurrency,
    webhookPlatformConcurrency,
    smtpUrl: url(env, 'SMTP_URL', ['smtp:', 'smtps:']),
    smtpFrom: emailAddress(env, 'SMTP_FROM', 'Corridor <no-reply@corridor.localhost>'),
    sessionLifetimeSeconds: integer(env, 'SESSION_LIFETIME_SECONDS', 900, 60, 86_400),
    walletEncryptionKey: hexKey(env, 'WALLET_ENCRYPTION_KEY'),
    sandboxUmaDomain: domainName(env, 'SANDBOX_UMA_DOMAIN', 'sandbox.uma.money'),
    umaAllowPrivateCounterparties: boolean(env, 'UMA_ALLOW_PRIVATE_COUNTERPARTIES', false),
    umaCounterpartyTimeoutMs: integer(env, 'UMA_COUNTERPARTY_TIMEOUT_MS', 10_000, 1_000, 60_000),
    umaCounterpartyConcurrency: integer(env, 'UMA_COUNTERPARTY_CONCURRENCY', 128, 2, 10_000),
    webhookAllowPrivateEndpoints: boolean(env, 'WEBHOOK_ALLOW_PRIVATE_ENDPOINTS', false),
    oidcAllowPrivateIssuers: boolean(env, 'OIDC_ALLOW_PRIVATE_ISSUERS', false),
    documentsDir: env.DOCUMENTS_DIR || (dataDir === 'memory' ? join(tmpdir(), 'corridor-documents') : join(dataDir, 'documents')),
    documentMaxBytes,
    documentsPerCustomer: integer(env, 'DOCUMENTS_PER_CUSTOMER', 100, 1, 100_000),
    documentStoragePerPlatform,
    bulkImportMaxBytes: integer(env, 'BULK_IMPORT_MAX_BYTES', 5 * 1_048_576, 1024, 100 * 1_048_576),
    bulkImportMaxRows: integer(env, 'BULK_IMPORT_MAX_ROWS', 10_000, 1, 1_000_000),
    kycLinkUrl: url(env, 'KYC_LINK_URL', ['http:', 'https:']),
    trustProxy: trustProxy(env, 'TRUST_PROXY'),
  };
}
