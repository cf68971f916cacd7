import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM helper without type declarations
import { buildIfStale } from '../scripts/build.mjs';
import { startTestApp, type TestApp, type TestPlatform } from './support/app.js';

const run = promisify(execFile);
let t: TestApp;
let p: TestPlatform;
let base: string;

beforeAll(async () => {
  buildIfStale({ quiet: true }); // the example loads the client helper from dist/
  t = await startTestApp();
  p = await t.createPlatform({ regulated: false });
  await t.corridor.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.corridor.app.server.address() as { port: number };
  base = `http://127.0.0.1:${address.port}/2025-10-13`;
});
afterAll(() => t.close());

describe('examples/', () => {
  it('wallet-pay.mjs pays out of an embedded wallet with a signed execute, as written', async () => {
    const { stdout } = await run(process.execPath, ['examples/wallet-pay.mjs'], {
      env: { ...process.env, CORRIDOR: base, AUTH: `${p.credentials.clientId}:${p.credentials.clientSecret}` },
    });
    expect(stdout).toMatch(/^wallet InternalAccount:/m);
    expect(stdout).toMatch(/^session Session:/m);
    expect(stdout).toMatch(/^quote Quote:\S+: PROCESSING$/m);
    const report = await t.corridor.services.ledger.verify(t.corridor.database.db, p.platform.id);
    expect(report.problems).toEqual([]);
  });
});
