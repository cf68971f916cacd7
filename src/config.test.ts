import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ port: 8080, host: '127.0.0.1', dataDir: './data', logLevel: 'info', publicUrl: 'http://127.0.0.1:8080' });
    expect(config.databaseUrl).toBeUndefined();
    expect(config.sandboxTokenId).toBeUndefined();
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '9000',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://u@db:5432/corridor',
      DATA_DIR: 'memory',
      LOG_LEVEL: 'debug',
      SERVICE_SANDBOX_TOKEN_ID: 'sandbox-token',
      SERVICE_SANDBOX_CLIENT_SECRET: 'a-long-enough-secret',
      PUBLIC_URL: 'https://pay.example.com/',
    });
    expect(config).toMatchObject({
      port: 9000,
      host: '0.0.0.0',
      databaseUrl: 'postgres://u@db:5432/corridor',
      dataDir: 'memory',
      logLevel: 'debug',
      sandboxTokenId: 'sandbox-token',
      sandboxClientSecret: 'a-long-enough-secret',
      publicUrl: 'https://pay.example.com',
    });
  });

  it('takes a Unix-socket DATABASE_URL in the forms node-postgres reads', () => {
    for (const url of [
      'postgres://corridor@/corridor?host=/var/run/postgresql',
      'postgres://corridor:pw@/corridor?host=/var/run/postgresql&port=5433',
      'postgresql:///corridor?host=/var/run/postgresql&user=corridor',
      'postgres://corridor@%2Fvar%2Frun%2Fpostgresql/corridor',
      'socket:/var/run/postgresql?db=corridor',
      'socket://corridor:pw@/var/run/postgresql?db=corridor',
      'postgres://u@[::1]:5432/corridor',
      'postgres:///corridor',
    ]) {
      expect(loadConfig({ DATABASE_URL: url }).databaseUrl, url).toBe(url);
    }
  });

  it('says which DATABASE_URL forms it takes, without repeating the value', () => {
    expect(() => loadConfig({ DATABASE_URL: 'not a url with s3cret' })).toThrow(/^DATABASE_URL: must be a PostgreSQL connection URL: postgres:\/\/user:password@host:port\/database, or for a Unix socket postgres:\/\/user@\/database\?host=/);
    expect(() => loadConfig({ DATABASE_URL: 'not a url with s3cret' })).not.toThrow(/s3cret/);
    expect(() => loadConfig({ DATABASE_URL: 'mysql://u:s3cret@db/x' })).toThrow('DATABASE_URL: must use postgres: or postgresql: (or socket: for a Unix socket), got mysql:');
  });

  it('reads the webhook delivery limits; the per-platform one defaults to at most the total', () => {
    expect(loadConfig({})).toMatchObject({ webhookConcurrency: 32, webhookPlatformConcurrency: 16 });
    expect(loadConfig({ WEBHOOK_CONCURRENCY: '64', WEBHOOK_PLATFORM_CONCURRENCY: '4' })).toMatchObject({ webhookConcurrency: 64, webhookPlatformConcurrency: 4 });
    expect(loadConfig({ WEBHOOK_CONCURRENCY: '8' })).toMatchObject({ webhookConcurrency: 8, webhookPlatformConcurrency: 8 });
  });

  it('reads the shutdown limit (default 30 s; 0 cuts off at once)', () => {
    expect(loadConfig({}).shutdownTimeoutMs).toBe(30_000);
    expect(loadConfig({ SHUTDOWN_TIMEOUT_MS: '0' }).shutdownTimeoutMs).toBe(0);
    expect(loadConfig({ SHUTDOWN_TIMEOUT_MS: '1500' }).shutdownTimeoutMs).toBe(1500);
    expect(() => loadConfig({ SHUTDOWN_TIMEOUT_MS: '600001' })).toThrow('SHUTDOWN_TIMEOUT_MS');
    expect(() => loadConfig({ SHUTDOWN_TIMEOUT_MS: '5s' })).toThrow('SHUTDOWN_TIMEOUT_MS');
  });

  it('reads the document quota', () => {
    expect(loadConfig({})).toMatchObject({ documentsPerCustomer: 100, documentStoragePerPlatform: 10 * 1024 ** 3 });
    expect(loadConfig({ DOCUMENTS_PER_CUSTOMER: '5', DOCUMENT_STORAGE_PER_PLATFORM: '1048576', DOCUMENT_MAX_BYTES: '1048576' })).toMatchObject({ documentsPerCustomer: 5, documentStoragePerPlatform: 1_048_576 });
    expect(() => loadConfig({ DOCUMENTS_PER_CUSTOMER: '0' })).toThrow(ConfigError);
    expect(() => loadConfig({ DOCUMENT_STORAGE_PER_PLATFORM: '1000' })).toThrow(ConfigError);
    expect(() => loadConfig({ DOCUMENT_STORAGE_PER_PLATFORM: '2097152', DOCUMENT_MAX_BYTES: '3145728' })).toThrow('must be at least DOCUMENT_MAX_BYTES (3145728)');
  });

  it('lets production platforms reach private addresses only when told to', () => {
    expect(loadConfig({})).toMatchObject({ umaAllowPrivateCounterparties: false, webhookAllowPrivateEndpoints: false, oidcAllowPrivateIssuers: false });
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE_ENDPOINTS: 'true', OIDC_ALLOW_PRIVATE_ISSUERS: '1' })).toMatchObject({ webhookAllowPrivateEndpoints: true, oidcAllowPrivateIssuers: true });
  });

  it('reads the cap on UMA counterparty calls in flight (default 128, 2–10,000)', () => {
    expect(loadConfig({}).umaCounterpartyConcurrency).toBe(128);
    expect(loadConfig({ UMA_COUNTERPARTY_CONCURRENCY: '2' }).umaCounterpartyConcurrency).toBe(2);
    expect(loadConfig({ UMA_COUNTERPARTY_CONCURRENCY: '10000' }).umaCounterpartyConcurrency).toBe(10_000);
    expect(() => loadConfig({ UMA_COUNTERPARTY_CONCURRENCY: '1' })).toThrow('UMA_COUNTERPARTY_CONCURRENCY');
    expect(() => loadConfig({ UMA_COUNTERPARTY_CONCURRENCY: '10001' })).toThrow('UMA_COUNTERPARTY_CONCURRENCY');
  });

  it('reads the UMA counterparty timeout (default 10 s)', () => {
    expect(loadConfig({}).umaCounterpartyTimeoutMs).toBe(10_000);
    expect(loadConfig({ UMA_COUNTERPARTY_TIMEOUT_MS: '2500' }).umaCounterpartyTimeoutMs).toBe(2500);
    expect(() => loadConfig({ UMA_COUNTERPARTY_TIMEOUT_MS: '999' })).toThrow('UMA_COUNTERPARTY_TIMEOUT_MS');
    expect(() => loadConfig({ UMA_COUNTERPARTY_TIMEOUT_MS: '60001' })).toThrow('UMA_COUNTERPARTY_TIMEOUT_MS');
  });

  it('believes X-Forwarded-For only from the proxies TRUST_PROXY names', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.1, 192.168.0.0/16,::1' }).trustProxy).toEqual(['10.0.0.1', '192.168.0.0/16', '::1']);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/32,fd00::/128' }).trustProxy).toEqual(['10.0.0.0/32', 'fd00::/128']);
  });

  it.each([
    [{ TRUST_PROXY: 'my-proxy' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.1/8/1' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.0/99' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '::1/129' }, 'TRUST_PROXY'],
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ HOST: 'bad host!' }, 'HOST'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'postgres:corridor' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'postgres://u@db:99999/corridor' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'socket:var/run/postgresql?db=corridor' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'socket://db.example.com/var/run/postgresql' }, 'DATABASE_URL'],
    [{ DATABASE_URL: '/var/run/postgresql corridor' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'http://u@/corridor?host=/var/run/postgresql' }, 'DATABASE_URL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ SERVICE_SANDBOX_TOKEN_ID: 'only-the-id' }, 'SERVICE_SANDBOX_CLIENT_SECRET'],
    [{ SERVICE_SANDBOX_CLIENT_SECRET: 'only-the-secret-here' }, 'SERVICE_SANDBOX_TOKEN_ID'],
    [{ SERVICE_SANDBOX_TOKEN_ID: 'sandbox-token', SERVICE_SANDBOX_CLIENT_SECRET: 'short' }, 'SERVICE_SANDBOX_CLIENT_SECRET'],
    [{ RUN_WORKERS: 'maybe' }, 'RUN_WORKERS'],
    [{ WEBHOOK_CONCURRENCY: '0' }, 'WEBHOOK_CONCURRENCY'],
    [{ WEBHOOK_CONCURRENCY: '8', WEBHOOK_PLATFORM_CONCURRENCY: '9' }, 'WEBHOOK_PLATFORM_CONCURRENCY'],
    [{ WEBHOOK_ALLOW_PRIVATE_ENDPOINTS: 'internal' }, 'WEBHOOK_ALLOW_PRIVATE_ENDPOINTS'],
    [{ OIDC_ALLOW_PRIVATE_ISSUERS: 'maybe' }, 'OIDC_ALLOW_PRIVATE_ISSUERS'],
  ])('rejects %j naming %s', (env, variable) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    try {
      loadConfig(env);
    } catch (error) {
      expect((error as ConfigError).variable).toBe(variable);
      expect((error as Error).message).toContain(variable);
    }
  });
});
