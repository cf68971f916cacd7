import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { apiClient, testConfig, type TestPlatform } from '../../../test/support/app.js';
import { sharedTestDatabase } from '../../../test/support/db.js';
import { completeIndividual, expectStatus, uploadDocument } from '../../../test/support/verification.js';
import { createPlatformWithToken } from '../../bootstrap.js';
import { runCli } from '../../cli/commands.js';
import { createCorridor } from '../../corridor.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Where the CLI and a test Corridor meet: this worker's PostgreSQL database, or a PGlite directory. */
async function databaseEnv(): Promise<Record<string, string>> {
  if (!process.env.TEST_DATABASE_URL) {
    const dir = mkdtempSync(join(tmpdir(), 'corridor-operator-'));
    dirs.push(dir);
    return { DATA_DIR: dir };
  }
  await sharedTestDatabase();
  const url = new URL(process.env.TEST_DATABASE_URL);
  const worker = process.env.VITEST_POOL_ID ?? process.env.VITEST_WORKER_ID ?? '0';
  url.pathname = `/${url.pathname.slice(1) || 'test'}_${process.ppid}_w${worker}`;
  return { DATABASE_URL: url.toString() };
}

/** Opens a Corridor on `env`'s database, runs `work` with a production platform, and closes it. */
async function withPlatform<T>(env: Record<string, string>, work: (p: TestPlatform) => Promise<T>): Promise<T> {
  const config = testConfig({ dataDir: env.DATA_DIR ?? 'memory', databaseUrl: env.DATABASE_URL, logLevel: 'silent' });
  const corridor = await createCorridor({ config, logger: false });
  try {
    const { platform, token } = await createPlatformWithToken(corridor.services, { name: 'Operator test', mode: 'PRODUCTION' }, corridor.database);
    const credentials = { clientId: token.clientId, clientSecret: token.clientSecret! };
    return await work({ platform, credentials, api: apiClient(corridor, credentials) });
  } finally {
    await corridor.close();
  }
}

async function cli(args: string[], env: Record<string, string>) {
  const lines: string[] = [];
  const errors: string[] = [];
  const code = await runCli(args, { out: (l) => lines.push(l), err: (l) => errors.push(l), env: { ...env, LOG_LEVEL: 'silent' } });
  return { code, out: lines.join('\n'), err: errors.join('\n') };
}

describe('corridor verification (the operator resolves manual reviews)', () => {
  it('lists verifications waiting for review and approves one', async () => {
    const env = await databaseEnv();
    const { verification, customerId } = await withPlatform(env, async (p) => {
      const customer = await completeIndividual(p, 'Olga Operator');
      await uploadDocument(p, customer.id);
      const v = expectStatus(await p.api.post('/verifications', { customerId: customer.id }), 200);
      expect(v.verificationStatus).toBe('PENDING_MANUAL_REVIEW');
      return { verification: v, customerId: customer.id };
    });

    const listed = await cli(['verification', 'list', '--json'], env);
    expect(listed.code, listed.err).toBe(0);
    expect(JSON.parse(listed.out).map((v: { id: string }) => v.id)).toContain(verification.id);

    const resolved = await cli(['verification', 'resolve', '--id', verification.id, '--status', 'APPROVED', '--json'], env);
    expect(resolved.code, resolved.err).toBe(0);
    expect(JSON.parse(resolved.out)).toMatchObject({ id: verification.id, customerId, verificationStatus: 'APPROVED', kycStatus: 'APPROVED' });

    const again = await cli(['verification', 'resolve', '--id', verification.id, '--status', 'REJECTED'], env);
    expect(again.code).toBe(1);
    expect(again.err).toContain('PENDING_MANUAL_REVIEW');
    const usage = await cli(['verification', 'resolve', '--id', verification.id, '--status', 'MAYBE'], env);
    expect(usage.code).toBe(64);
  });
});
