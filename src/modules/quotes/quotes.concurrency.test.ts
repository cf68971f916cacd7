import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { advance, balances, expectLedgerClean, fund, newCustomer, usdAccount, type TestCustomer } from '../../../test/support/quotes.js';

// Executions of different quotes against shared balances. Concurrent executions are committed in
// shared transactions (createWriteBatcher), so these also cover a batch's locks and its split
// when one execution in it is refused.

let t: TestApp;
let p: TestPlatform;
let alice: TestCustomer;

beforeAll(async () => {
  t = await startTestApp();
  p = await t.createPlatform();
  alice = await newCustomer(p, 'Alice Ng');
});
afterAll(() => t.close());

describe('POST /quotes/{quoteId}/execute, concurrently', () => {
  it('parallel executes of different quotes never overdraw the shared balance', async () => {
    const sender = await newCustomer(p);
    await fund(p, sender.accounts.EUR, 25_000);
    const payout = await usdAccount(p, alice.id, '001');
    const quotes = await Promise.all(
      Array.from({ length: 5 }, () =>
        p.api.post('/quotes', {
          source: { sourceType: 'ACCOUNT', accountId: sender.accounts.EUR },
          destination: { destinationType: 'ACCOUNT', accountId: payout },
          lockedCurrencySide: 'SENDING',
          lockedCurrencyAmount: 10_000,
        }),
      ),
    );
    const results = await Promise.all(quotes.map((q) => p.api.post(`/quotes/${q.body.id}/execute`)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(2);
    expect(results.filter((r) => r.status === 400 && r.body.code === 'INSUFFICIENT_FUNDS')).toHaveLength(3);
    expect((await balances(t, sender.accounts.EUR)).available).toBe(5_000);
  });

  it('40 parallel executes over 4 payers, each funded for 7: 28 run, 12 are refused, every balance is exact', async () => {
    const payout = await usdAccount(p, alice.id, '001');
    const payers = await Promise.all(Array.from({ length: 4 }, () => newCustomer(p)));
    for (const payer of payers) await fund(p, payer.accounts.EUR, 70_000);
    const quotes = [];
    for (let i = 0; i < 40; i++) {
      const res = await p.api.post('/quotes', {
        source: { sourceType: 'ACCOUNT', accountId: payers[i % 4].accounts.EUR },
        destination: { destinationType: 'ACCOUNT', accountId: payout },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: 10_000,
      });
      quotes.push(res.body);
    }
    const results = await Promise.all(quotes.map((q) => p.api.post(`/quotes/${q.id}/execute`)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(28);
    expect(results.filter((r) => r.status === 400 && r.body.code === 'INSUFFICIENT_FUNDS')).toHaveLength(12);
    for (const payer of payers) expect(await balances(t, payer.accounts.EUR)).toEqual({ available: 0, posted: 70_000 });
    await advance(p, 2);
    for (const payer of payers) expect(await balances(t, payer.accounts.EUR)).toEqual({ available: 0, posted: 0 });
    await expectLedgerClean(t, p.platform.id);
  });
});
