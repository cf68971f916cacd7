// The device-code failure limit holds for guesses sent in parallel: twenty failures from one
// address within a minute, then 429, however many are in flight at once. Its own app, so its own
// limiter.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { agentPolicy } from '../../../test/support/agents.js';

let t: TestApp;
let code: string;
let p: TestPlatform;

beforeAll(async () => {
  t = await startTestApp();
  p = await t.createPlatform();
  const customer = await p.api.post('/customers', { customerType: 'INDIVIDUAL', fullName: 'Limited Agentowner', currencies: ['USD'] });
  const created = await p.api.post('/agents', { name: 'limited', customerId: customer.body.id, policy: agentPolicy() });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  code = created.body.deviceCode.code;
});
afterAll(() => t.close());

const guess = (i: number) => `AGT-PARA-${String(i).padStart(4, '0')}-0000-0000`;

describe('device code failures in parallel', () => {
  it('lookups that succeed do not count; of 100 parallel wrong guesses only what is left of the 20 answer 404, the rest 429', async () => {
    for (let i = 0; i < 5; i++) expect((await p.api.get(`/agents/device-codes/${code}/status`)).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await t.anonymous.post(`/agents/device-codes/${guess(i)}/redeem`)).status).toBe(404);
    const statuses = (await Promise.all(Array.from({ length: 100 }, (_, i) => t.anonymous.post(`/agents/device-codes/${guess(100 + i)}/redeem`)))).map((r) => r.status);
    expect(statuses.filter((s) => s === 404)).toHaveLength(15);
    expect(statuses.filter((s) => s === 429)).toHaveLength(85);
  });
});
