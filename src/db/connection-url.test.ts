import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { displayConnectionUrl, parseConnectionUrl } from './connection-url.js';
import { connectionConfig } from './database.js';

const PINNED = '-c DateStyle=ISO,\\ MDY -c IntervalStyle=postgres -c default_transaction_isolation=read\\ committed';

describe('displayConnectionUrl', () => {
  it('keeps the host, port, database and socket directory, never the password or other parameters', () => {
    expect(displayConnectionUrl('postgres://corridor:s3cret@127.0.0.1:5/corridor?password=s3cret')).toBe('postgres://corridor@127.0.0.1:5/corridor');
    expect(displayConnectionUrl('postgres://corridor:s3cret@/corridor?host=/var/run/postgresql&sslpassword=s3cret')).toBe('postgres://corridor@/corridor?host=/var/run/postgresql');
    expect(displayConnectionUrl('postgresql:///corridor?host=/run/pg&port=5433&user=app&password=s3cret')).toBe('postgresql:///corridor?host=/run/pg&port=5433');
    expect(displayConnectionUrl('postgres://app:s3cret@%2Fvar%2Frun%2Fpostgresql/corridor')).toBe('postgres://app@%2Fvar%2Frun%2Fpostgresql/corridor');
    expect(displayConnectionUrl('socket://app:s3cret@/var/run/postgresql?db=corridor&password=s3cret')).toBe('socket:/var/run/postgresql?db=corridor');
    expect(displayConnectionUrl('not a url s3cret')).toBe('DATABASE_URL');
  });

  it('parses user@/database as node-postgres does, with no host', () => {
    const parsed = parseConnectionUrl('postgres://app@/corridor?host=/var/run/postgresql');
    expect(parsed?.hostless).toBe(true);
    expect(parsed?.url.searchParams.get('host')).toBe('/var/run/postgresql');
  });
});

describe('connectionConfig', () => {
  const pgoptions = process.env.PGOPTIONS;
  afterEach(() => {
    if (pgoptions === undefined) delete process.env.PGOPTIONS;
    else process.env.PGOPTIONS = pgoptions;
  });

  /** What node-postgres makes of it: the parameters a new connection would start with. */
  function connectionParameters(config: pg.ClientConfig) {
    const parameters = (new pg.Client(config) as unknown as { connectionParameters: Record<string, unknown> }).connectionParameters;
    const { host, port, user, password, database, options, ssl } = parameters;
    return { host, port, user, password, database, options, ssl };
  }

  it('pins the session settings after the operator’s URL options, and lets those override the lock timeout', () => {
    delete process.env.PGOPTIONS;
    const config = connectionConfig('postgres://app:pw@db.internal:5433/corridor?options=-c%20search_path%3Dcorridor%20-c%20lock_timeout%3D2s&sslmode=disable');
    expect(connectionParameters(config)).toEqual({
      host: 'db.internal',
      port: 5433,
      user: 'app',
      password: 'pw',
      database: 'corridor',
      ssl: false,
      options: `-c lock_timeout=0 -c search_path=corridor -c lock_timeout=2s ${PINNED}`,
    });
  });

  it('takes PGOPTIONS when the URL gives no options (as node-postgres would), and appends the pool’s own', () => {
    process.env.PGOPTIONS = '-c work_mem=64MB';
    expect(connectionParameters(connectionConfig('postgres://app@db/corridor', '-c plan_cache_mode=force_generic_plan')).options).toBe(`-c lock_timeout=0 -c work_mem=64MB ${PINNED} -c plan_cache_mode=force_generic_plan`);
    expect(connectionParameters(connectionConfig('postgres://app@db/corridor?options=-c%20work_mem%3D1MB')).options).toBe(`-c lock_timeout=0 -c work_mem=1MB ${PINNED}`);
  });

  it('reads Unix-socket URLs, extending their options too', () => {
    delete process.env.PGOPTIONS;
    for (const url of [
      'postgres://app@/corridor?host=/var/run/postgresql',
      'postgres://app:pw@/corridor?options=-c%20work_mem%3D1MB&host=/var/run/postgresql',
      'postgresql:///corridor?host=/var/run/postgresql&user=app&options=-c+work_mem%3D1MB',
      'socket://app@/var/run/postgresql?db=corridor&options=-c%20work_mem%3D1MB',
      'postgres://app@%2Fvar%2Frun%2Fpostgresql/corridor',
    ]) {
      const work = url.includes('work_mem') ? ' -c work_mem=1MB' : '';
      expect(connectionParameters(connectionConfig(url, '-c enable_seqscan=off')), url).toMatchObject({
        host: '/var/run/postgresql',
        user: 'app',
        database: 'corridor',
        options: `-c lock_timeout=0${work} ${PINNED} -c enable_seqscan=off`,
      });
    }
  });
});
