// Runs the curl walk-through of docs/agents.md as written (only the base URL and the credentials
// of its first block are swapped for this test's), so the guide cannot drift from the API.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';

const GUIDE = new URL('../../../docs/agents.md', import.meta.url);

let t: TestApp;
let p: TestPlatform;
let baseUrl: string;
let dir: string;

beforeAll(async () => {
  t = await startTestApp();
  // Like the platform `npm start` creates: a sandbox that is not a regulated institution.
  p = await t.createPlatform({ regulated: false });
  const address = await t.corridor.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `${address}/2025-10-13`;
  dir = mkdtempSync(join(tmpdir(), 'corridor-agents-guide-'));
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await t.close();
});

/** The guide's ```sh blocks, in order, with this test's server and credentials. */
function guideScript(): string {
  const blocks = [...readFileSync(GUIDE, 'utf8').matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
  expect(blocks.length).toBeGreaterThan(5);
  const script = blocks
    .join('\n')
    .replace(/^export CORRIDOR=.*$/m, `export CORRIDOR=${baseUrl}`)
    .replace(/^export AUTH=.*$/m, `export AUTH=${p.credentials.clientId}:${p.credentials.clientSecret}`);
  return `set -euo pipefail\n${script}`;
}

it('the walk-through in docs/agents.md works as written', async () => {
  const path = join(dir, 'walkthrough.sh');
  writeFileSync(path, guideScript());
  const { stdout } = await promisify(execFile)('bash', [path], { cwd: dir, timeout: 60_000 });
  const lines = stdout.trim().split('\n');
  expect(lines).toEqual([
    'PASSPORT',
    'APPROVED',
    '100000',
    expect.stringMatching(/^Agent:\S+ AGT(-[0-9A-Z]{4}){4}$/),
    'true',
    'APPROVED',
    'PENDING_APPROVAL',
    'SPENDING_LIMIT_EXCEEDED dailyLimit',
    'SPENDING_LIMIT_EXCEEDED perTransactionLimit',
    expect.stringMatching(/^\{"dailyTransactionCount":2,"dailySpend":6500,"dailyResetDate":"\d{4}-\d{2}-\d{2}","monthlySpend":6500,"monthlyResetMonth":"\d{4}-\d{2}"\}$/),
    expect.stringMatching(/^AgentAction:\S+ 4000$/),
    expect.stringMatching(/^APPROVED Transaction:\S+$/),
    'true',
    'AGENT_PAUSED',
    'true',
    'false',
    '{"currency":"USD","perTransactionLimit":5000,"dailyLimit":20000,"monthlyLimit":null,"dailyTransactionLimit":10}',
    '204',
    'UNAUTHORIZED',
  ]);
});
