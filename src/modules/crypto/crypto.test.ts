import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { sparkAddress } from '../accounts/sandbox-addresses.js';

let t: TestApp;
let p: TestPlatform;
let usdc: string;
let usd: string;

const SOLANA_ADDRESS = '7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU';
const EVM_ADDRESS = '0x52908400098527886E0F7030069857D2E4169EE7';

function estimate(overrides: Record<string, unknown> = {}, platform = p) {
  return platform.api.post('/crypto/estimate-withdrawal-fee', {
    internalAccountId: usdc,
    currency: 'USDC',
    cryptoNetwork: 'SOLANA_MAINNET',
    amount: 1_000_000,
    destinationAddress: SOLANA_ADDRESS,
    ...overrides,
  });
}

beforeAll(async () => {
  t = await startTestApp();
  p = await t.createPlatform({ currencies: ['USD', 'USDC'] });
  const customer = await p.api.post('/customers', { customerType: 'INDIVIDUAL', fullName: 'Chain User' });
  const accounts = (await p.api.get('/customers/internal-accounts', { customerId: customer.body.id })).body.data;
  usdc = accounts.find((a: { balance: { currency: { code: string } } }) => a.balance.currency.code === 'USDC').id;
  usd = accounts.find((a: { balance: { currency: { code: string } } }) => a.balance.currency.code === 'USD').id;
});
afterAll(() => t.close());

describe('POST /crypto/estimate-withdrawal-fee', () => {
  it('converts the network fee into the withdrawal currency, rounding up', async () => {
    const { status, body } = await estimate();
    expect(status).toBe(200);
    // 15,000 lamports at 138 USD/SOL = 0.00207 USD = 2,070 USDC units (6 decimals).
    expect(body).toEqual({ networkFee: 15_000, networkFeeAsset: 'SOL', applicationFee: 0, totalFee: 2_070, netAmount: 997_930 });
  });

  it('adds the platform\'s fixed fee for the currency', async () => {
    await p.api.patch('/config', { fees: { variableFeeRate: 0, fixedFees: [{ currencyCode: 'USDC', amount: 100 }], fxSpreadBps: 0 } });
    const { body } = await estimate();
    expect(body).toMatchObject({ applicationFee: 100, totalFee: 2_170, netAmount: 997_830 });
    await p.api.patch('/config', { fees: { variableFeeRate: 0.003, fixedFees: [], fxSpreadBps: 25 } });
  });

  it('prices Ethereum in wei and Spark at no network fee', async () => {
    const eth = await estimate({ cryptoNetwork: 'ETHEREUM_MAINNET', destinationAddress: EVM_ADDRESS, amount: 10_000_000 });
    // 65,000 gas × 20 gwei = 1.3e15 wei at 3,050 USD/ETH = 3.965 USD.
    expect(eth.body).toEqual({ networkFee: 1_300_000_000_000_000, networkFeeAsset: 'ETH', applicationFee: 0, totalFee: 3_965_000, netAmount: 6_035_000 });
    const spark = await estimate({ cryptoNetwork: 'SPARK_TESTNET', destinationAddress: sparkAddress('crypto-test') });
    expect(spark.body).toEqual({ networkFee: 0, networkFeeAsset: 'BTC', applicationFee: 0, totalFee: 0, netAmount: 1_000_000 });
  });

  it.each<[Record<string, unknown>, string]>([
    [{ internalAccountId: 'usd' }, 'internalAccountId'],
    [{ currency: 'USDT' }, 'currency'],
    [{ cryptoNetwork: 'LIGHTNING_MAINNET', destinationAddress: 'someone@example.com' }, 'cryptoNetwork'],
    [{ destinationAddress: EVM_ADDRESS }, 'destinationAddress'],
    [{ cryptoNetwork: 'DOGECOIN' }, 'cryptoNetwork'],
    [{ amount: 0 }, 'amount'],
    [{ amount: '100' }, 'amount'],
    [{ extra: true }, 'extra'],
  ])('rejects %j', async (overrides, field) => {
    const body = { ...overrides, ...(overrides.internalAccountId === 'usd' && { internalAccountId: usd }) };
    const response = await estimate(body);
    expect(response.status).toBe(400);
    expect(response.body.details.errors[0].field).toBe(field);
  });

  it('refuses an amount that does not cover the fee', async () => {
    const response = await estimate({ amount: 2_070 });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'AMOUNT_OUT_OF_RANGE', details: { totalFee: 2_070 } });
  });

  it('unknown and other platforms\' accounts are 404; no credentials are 401', async () => {
    expect((await estimate({ internalAccountId: 'InternalAccount:00000000-0000-7000-8000-000000000000' })).status).toBe(404);
    const other = await t.createPlatform();
    expect((await estimate({}, other)).status).toBe(404);
    expect((await t.anonymous.post('/crypto/estimate-withdrawal-fee', {})).status).toBe(401);
  });
});
