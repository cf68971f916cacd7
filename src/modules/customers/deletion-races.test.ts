// A customer deleted while requests create things of theirs: every create either commits first
// (and the deletion's hooks then delete or cancel what it made) or sees no customer (404), so no
// live child of a deleted customer remains. Raced many times on purpose: on PostgreSQL the
// requests run on separate connections; on PGlite they interleave between statements.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type ApiResponse, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { agentPolicy } from '../../../test/support/agents.js';

let t: TestApp;
let p: TestPlatform;

beforeAll(async () => {
  t = await startTestApp();
  p = await t.createPlatform();
});
afterAll(() => t.close());

let seq = 0;
const ROUNDS = 25;
/** Creates of each kind sent with each deletion. */
const PER_KIND = 2;
/** How long after the creates the deletion is sent: creates then reach their checks and transactions before or after it. */
const DELAYS_MS = [0, 1, 2, 4, 6, 10];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function newCustomer(): Promise<{ id: string; umaAddress: string }> {
  const n = ++seq;
  const res = await p.api.post('/customers', { customerType: 'INDIVIDUAL', fullName: `Racing ${n}`, umaAddress: `$racer${n}@race.example`, currencies: ['USD'] });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

const creates = {
  agent: (c: { id: string }) => p.api.post('/agents', { name: `agent ${++seq}`, customerId: c.id, policy: agentPolicy() }),
  externalAccount: (c: { id: string }) =>
    p.api.post('/customers/external-accounts', {
      customerId: c.id,
      currency: 'USD',
      accountInfo: { accountType: 'USD_ACCOUNT', accountNumber: `${7_000_000 + ++seq}001`, routingNumber: '021000021', beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Racing Person' } },
    }),
  invitation: (c: { umaAddress: string }) => p.api.post('/invitations', { inviterUma: c.umaAddress }),
};
type Kind = keyof typeof creates;

/** What of the customer is still live after its deletion (should be nothing). */
async function liveChildren(customerId: string) {
  const { db } = t.corridor.database;
  const agents = await db.selectFrom('agents').select('id').where('customer_id', '=', customerId).where('deleted_at', 'is', null).execute();
  const accounts = await db.selectFrom('external_accounts').select('id').where('customer_id', '=', customerId).where('is_deleted', '=', false).execute();
  const invitations = await db.selectFrom('invitations').select('code').where('inviter_customer_id', '=', customerId).where('status', '=', 'PENDING').execute();
  return { agents: agents.length, externalAccounts: accounts.length, pendingInvitations: invitations.length };
}

function expectCreatedOrGone(kind: Kind, res: ApiResponse): void {
  if (res.status === 201) return;
  expect({ kind, status: res.status, code: res.body?.code }).toEqual({ kind, status: 404, code: 'USER_NOT_FOUND' });
}

describe('DELETE /customers/{id} racing creates of the customer\'s things', () => {
  it('leaves no live agent, external account or pending invitation of the deleted customer', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const customer = await newCustomer();
      const kinds = (Object.keys(creates) as Kind[]).flatMap((kind) => Array<Kind>(PER_KIND).fill(kind));
      // The deletion goes out with the creates or a few milliseconds after them (DELAYS_MS).
      const delay = DELAYS_MS[round % DELAYS_MS.length];
      const requests = kinds.map((kind) => creates[kind](customer));
      const deleting = sleep(delay).then(() => p.api.delete(`/customers/${customer.id}`));
      const [deleted, responses] = await Promise.all([deleting, Promise.all(requests)]);
      expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
      responses.forEach((res, i) => expectCreatedOrGone(kinds[i], res));

      expect({ round, ...(await liveChildren(customer.id)) }).toEqual({ round, agents: 0, externalAccounts: 0, pendingInvitations: 0 });
      // The device code of an agent that was created does not redeem into a token.
      for (const [i, res] of responses.entries()) {
        if (kinds[i] !== 'agent' || res.status !== 201) continue;
        const redeemed = await t.anonymous.post(`/agents/device-codes/${res.body.deviceCode.code}/redeem`);
        expect(redeemed.status, JSON.stringify(redeemed.body)).not.toBe(200);
      }
    }
  });
});
