// Redeeming a device code while the platform re-issues the agent's code or deletes the agent: each
// side takes the agent's row lock before the code's, so one waits for the other instead of the two
// deadlocking (a 500). PostgreSQL only: PGlite runs one transaction at a time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type ApiResponse, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { agentPolicy } from '../../../test/support/agents.js';
import { testDatabaseKind } from '../../../test/support/db.js';

let t: TestApp;
let p: TestPlatform;
let customerId: string;

const ROUNDS = 24;
const DELAYS_MS = [0, 1, 2, 4];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(testDatabaseKind() !== 'postgres')('device code redemption racing the platform', () => {
  beforeAll(async () => {
    t = await startTestApp();
    p = await t.createPlatform();
    const customer = await p.api.post('/customers', { customerType: 'INDIVIDUAL', fullName: 'Racing Agentowner', currencies: ['USD'] });
    expect(customer.status, JSON.stringify(customer.body)).toBe(201);
    customerId = customer.body.id;
  });
  afterAll(() => t?.close());

  /** Creates an agent, then redeems its code and runs `other` on it together, `other` a little later each round. */
  async function race(other: (agentId: string) => Promise<ApiResponse>) {
    const outcomes: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const created = await p.api.post('/agents', { name: `racer ${round}`, customerId, policy: agentPolicy() });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      // Each round from an address of its own: the redeems that find nothing count toward the
      // per-address limit (20 a minute), which would otherwise answer 429 in the race's place.
      const [redeemed, raced] = await Promise.all([
        t.anonymous.request({ method: 'POST', path: `/agents/device-codes/${created.body.deviceCode.code}/redeem`, body: {}, remoteAddress: `10.0.0.${round + 1}` }),
        sleep(DELAYS_MS[round % DELAYS_MS.length]).then(() => other(created.body.agent.id)),
      ]);
      outcomes.push(raced.status >= 400 ? `${redeemed.status} ${raced.status} ${raced.body.code}` : `${redeemed.status} ${raced.status}`);
    }
    return outcomes;
  }

  it('against a new code: either the redeem connects the agent (then 409) or the new code replaces it (then 404)', async () => {
    const outcomes = await race((id) => p.api.post(`/agents/${id}/device-codes`));
    for (const outcome of outcomes) expect(['200 409 AGENT_ALREADY_CONNECTED', '404 201']).toContain(outcome);
  });

  it('against deleting the agent: the deletion succeeds, the redeem connects first or finds nothing', async () => {
    const outcomes = await race((id) => p.api.delete(`/agents/${id}`));
    for (const outcome of outcomes) expect(['200 204', '404 204']).toContain(outcome);
  });
});
