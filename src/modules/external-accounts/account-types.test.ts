import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type ApiResponse, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { ACCOUNT_TYPES } from './account-types/index.js';

const person = (extra: Record<string, unknown> = {}) => ({
  beneficiaryType: 'INDIVIDUAL',
  fullName: 'Maria Silva',
  birthDate: '1988-04-02',
  nationality: 'BR',
  ...extra,
});
const address = { line1: '1 Main Street', city: 'Springfield', postalCode: '12345', country: 'US' };
const SPARK = 'sp1pgss8u5vh4cldqxarcl2hnqgqelhupdt6g9e9y5x489t8ky355f3veh6dln5pf';
const INVOICE =
  'lnbc15u1p3xnhl2pp5jptserfk3zk4qy42tlucycrfwxhydvlemu9pqr93tuzlv9cc7g3sdqsvfhkcap3xyhx7un8cqzpgxqzjcsp5f8c52y2stc300gl6s4xswtjpc37hrnnr3c9wvtgjfuvqmpm35evq9qyyssqy4lgd8tj637qcjp05rdpxxykjenthxftej7a2zzmwrmrl70fyj9hvj0rewhzj7jfyuwkwcg9g2jpwtk3wkjtwnkdks84hsnu8xps5vsq4gj5hs';

interface Case {
  currency: string;
  info: Record<string, unknown>;
  identifier: string;
  rails?: string[];
}

/** One valid account per type, with the identifier Corridor must store. */
const VALID: Record<string, Case> = {
  USD_ACCOUNT: { currency: 'USD', info: { accountNumber: '12345678901', routingNumber: '021000021', bankName: 'Chase Bank', bankAccountType: 'CHECKING', beneficiary: person({ address }) }, identifier: '12345678901', rails: ['ACH', 'WIRE'] },
  CAD_ACCOUNT: { currency: 'CAD', info: { bankCode: '003', branchCode: '00012', accountNumber: '1234567', beneficiary: person({ registrationNumber: 'A123' }) }, identifier: '1234567', rails: ['BANK_TRANSFER'] },
  MXN_ACCOUNT: { currency: 'MXN', info: { clabeNumber: '032180000118359719', beneficiary: person() }, identifier: '032180000118359719', rails: ['SPEI'] },
  BRL_ACCOUNT: { currency: 'BRL', info: { pixKey: '52998224725', pixKeyType: 'CPF', taxId: '52998224725', beneficiary: person() }, identifier: '52998224725', rails: ['PIX'] },
  COP_ACCOUNT: { currency: 'COP', info: { bankName: 'Bancolombia', accountNumber: '12345678901', bankAccountType: 'SAVINGS', beneficiary: person({ documentType: 'CC', documentNumber: '1020304050' }) }, identifier: '12345678901' },
  GTQ_ACCOUNT: { currency: 'GTQ', info: { accountNumber: '1234567890', bankAccountType: 'CHECKING', beneficiary: person({ countryOfResidence: 'GT', phoneNumber: '+50255551234' }) }, identifier: '1234567890' },
  JMD_ACCOUNT: { currency: 'JMD', info: { accountNumber: '123456789', branchCode: '12345', bankAccountType: 'SAVINGS', beneficiary: person({ address, phoneNumber: '+18765551234' }) }, identifier: '123456789' },
  EUR_ACCOUNT: { currency: 'EUR', info: { iban: 'DE89370400440532013000', swiftCode: 'COBADEFFXXX', beneficiary: person({ address: { ...address, country: 'DE' } }) }, identifier: 'DE89370400440532013000', rails: ['SEPA', 'SEPA_INSTANT'] },
  DKK_ACCOUNT: { currency: 'DKK', info: { iban: 'DK5000400440116243', swiftCode: 'DABADKKK', beneficiary: person() }, identifier: 'DK5000400440116243' },
  GBP_ACCOUNT: { currency: 'GBP', info: { sortCode: '401276', accountNumber: '12345678', beneficiary: person() }, identifier: '12345678', rails: ['FASTER_PAYMENTS'] },
  HKD_ACCOUNT: { currency: 'HKD', info: { bankName: 'Hang Seng Bank', accountNumber: '123456789012', swiftCode: 'HASEHKHH', beneficiary: person() }, identifier: '123456789012' },
  IDR_ACCOUNT: { currency: 'IDR', info: { bankName: 'Bank Central Asia', accountNumber: '1234567890', swiftCode: 'CENAIDJA', phoneNumber: '+6281234567890', beneficiary: person() }, identifier: '1234567890' },
  MYR_ACCOUNT: { currency: 'MYR', info: { bankName: 'Maybank', accountNumber: '123456789012', swiftCode: 'MBBEMYKL', beneficiary: person() }, identifier: '123456789012' },
  SGD_ACCOUNT: { currency: 'SGD', info: { bankName: 'DBS Bank Ltd', accountNumber: '0123456789', swiftCode: 'DBSSSGSG', beneficiary: person() }, identifier: '0123456789', rails: ['FAST', 'BANK_TRANSFER'] },
  THB_ACCOUNT: { currency: 'THB', info: { bankName: 'Bangkok Bank', accountNumber: '1234567890', swiftCode: 'BKKBTHBK', beneficiary: person() }, identifier: '1234567890' },
  VND_ACCOUNT: { currency: 'VND', info: { bankName: 'Vietcombank', accountNumber: '0123456789', swiftCode: 'BFTVVNVX', beneficiary: person() }, identifier: '0123456789' },
  NGN_ACCOUNT: { currency: 'NGN', info: { accountNumber: '0123456789', bankName: 'GTBank', beneficiary: person() }, identifier: '0123456789' },
  PHP_ACCOUNT: { currency: 'PHP', info: { bankName: 'BDO Unibank', accountNumber: '001234567890', beneficiary: person() }, identifier: '001234567890' },
  ZAR_ACCOUNT: { currency: 'ZAR', info: { accountNumber: '1234567890', bankName: 'Capitec Bank', beneficiary: person() }, identifier: '1234567890' },
  INR_ACCOUNT: { currency: 'INR', info: { vpa: 'priya.sharma@okhdfc', beneficiary: person() }, identifier: 'priya.sharma@okhdfc', rails: ['UPI'] },
  AED_ACCOUNT: { currency: 'AED', info: { iban: 'AE070331234567890123456', swiftCode: 'EBILAEAD', beneficiary: person() }, identifier: 'AE070331234567890123456' },
  EGP_ACCOUNT: { currency: 'EGP', info: { bankName: 'National Bank of Egypt', accountNumber: '1234567890', iban: 'EG380019000500000000263180002', swiftCode: 'NBEGEGCX', beneficiary: person({ address: { ...address, country: 'EG' }, countryOfResidence: 'EG', phoneNumber: '+201001234567' }) }, identifier: '1234567890' },
  PKR_ACCOUNT: { currency: 'PKR', info: { iban: 'PK36SCBL0000001123456702', bankName: 'HBL', beneficiary: person() }, identifier: 'PK36SCBL0000001123456702', rails: ['BANK_TRANSFER'] },
  BDT_ACCOUNT: { currency: 'BDT', info: { phoneNumber: '+8801712345678', beneficiary: person() }, identifier: '+8801712345678', rails: ['MOBILE_MONEY'] },
  GHS_ACCOUNT: { currency: 'GHS', info: { accountNumber: '12345678901', phoneNumber: '+233241234567', beneficiary: person() }, identifier: '12345678901', rails: ['BANK_TRANSFER', 'MOBILE_MONEY'] },
  KES_ACCOUNT: { currency: 'KES', info: { phoneNumber: '+254712345678', provider: 'M-Pesa', beneficiary: person() }, identifier: '+254712345678', rails: ['MOBILE_MONEY'] },
  RWF_ACCOUNT: { currency: 'RWF', info: { phoneNumber: '+250781234567', provider: 'MTN MoMo', beneficiary: person() }, identifier: '+250781234567' },
  TZS_ACCOUNT: { currency: 'TZS', info: { phoneNumber: '+255712345678', provider: 'Vodacom M-Pesa', beneficiary: person() }, identifier: '+255712345678' },
  ZMW_ACCOUNT: { currency: 'ZMW', info: { phoneNumber: '+260971234567', provider: 'Airtel Money', beneficiary: person() }, identifier: '+260971234567' },
  UGX_ACCOUNT: { currency: 'UGX', info: { phoneNumber: '+256712345678', provider: 'MTN MoMo', beneficiary: person() }, identifier: '+256712345678' },
  MWK_ACCOUNT: { currency: 'MWK', info: { phoneNumber: '+265991234567', provider: 'Airtel Money', beneficiary: person() }, identifier: '+265991234567' },
  BWP_ACCOUNT: { currency: 'BWP', info: { phoneNumber: '+26771234567', provider: 'Orange Money', beneficiary: person() }, identifier: '+26771234567' },
  XAF_ACCOUNT: { currency: 'XAF', info: { phoneNumber: '+237671234567', provider: 'MTN MoMo', region: 'CM', beneficiary: person() }, identifier: '+237671234567' },
  XOF_ACCOUNT: { currency: 'XOF', info: { phoneNumber: '+221771234567', provider: 'Orange Money', region: 'SN', beneficiary: { beneficiaryType: 'BUSINESS', legalName: 'Dakar Traders SARL' } }, identifier: '+221771234567' },
  HTG_ACCOUNT: { currency: 'HTG', info: { phoneNumber: '+50934123456', beneficiary: person() }, identifier: '+50934123456' },
  SPARK_WALLET: { currency: 'BTC', info: { address: SPARK }, identifier: SPARK },
  LIGHTNING: { currency: 'BTC', info: { invoice: INVOICE }, identifier: INVOICE },
  SOLANA_WALLET: { currency: 'USDC', info: { address: '4Nd1m6Qkq7RfKuE5vQ9qP9Tn6H94Ueqb4xXHzsAbd8Wg' }, identifier: '4Nd1m6Qkq7RfKuE5vQ9qP9Tn6H94Ueqb4xXHzsAbd8Wg' },
  TRON_WALLET: { currency: 'USDT', info: { address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' }, identifier: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' },
  POLYGON_WALLET: { currency: 'USDC', info: { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' }, identifier: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' },
  BASE_WALLET: { currency: 'USDC', info: { address: '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359' }, identifier: '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359' },
  ETHEREUM_WALLET: { currency: 'USDC', info: { address: '0x52908400098527886e0f7030069857d2e4169ee7' }, identifier: '0x52908400098527886e0f7030069857d2e4169ee7' },
};

/** [accountType, change to a valid case, field, constraint]: one broken field per case. */
const INVALID: Array<[string, Record<string, unknown>, string, string]> = [
  ['USD_ACCOUNT', { routingNumber: '021000022' }, 'accountInfo.routingNumber', 'checksum'],
  ['USD_ACCOUNT', { accountNumber: '12-34' }, 'accountInfo.accountNumber', 'format'],
  ['USD_ACCOUNT', { bankName: 'BDO Unibank' }, 'accountInfo.bankName', 'enum'],
  ['CAD_ACCOUNT', { bankCode: '3' }, 'accountInfo.bankCode', 'pattern'],
  ['CAD_ACCOUNT', { branchCode: '0001' }, 'accountInfo.branchCode', 'pattern'],
  ['MXN_ACCOUNT', { clabeNumber: '032180000118359718' }, 'accountInfo.clabeNumber', 'checksum'],
  ['BRL_ACCOUNT', { pixKey: '52998224726' }, 'accountInfo.pixKey', 'checksum'],
  ['BRL_ACCOUNT', { pixKeyType: 'CNPJ', pixKey: '11222333000182' }, 'accountInfo.pixKey', 'checksum'],
  ['BRL_ACCOUNT', { pixKeyType: 'EMAIL', pixKey: 'maria@' }, 'accountInfo.pixKey', 'format'],
  ['BRL_ACCOUNT', { pixKeyType: 'PHONE', pixKey: '+14155550123' }, 'accountInfo.pixKey', 'format'],
  ['BRL_ACCOUNT', { pixKeyType: 'RANDOM', pixKey: 'not-a-uuid' }, 'accountInfo.pixKey', 'format'],
  ['BRL_ACCOUNT', { pixKeyType: 'EVP' }, 'accountInfo.pixKeyType', 'enum'],
  ['BRL_ACCOUNT', { taxId: '11111111111' }, 'accountInfo.taxId', 'checksum'],
  ['COP_ACCOUNT', { beneficiary: person() }, 'accountInfo.beneficiary.documentType', 'required'],
  ['GTQ_ACCOUNT', { bankAccountType: 'MONEY_MARKET' }, 'accountInfo.bankAccountType', 'enum'],
  ['JMD_ACCOUNT', { beneficiary: person({ address }) }, 'accountInfo.beneficiary.phoneNumber', 'required'],
  ['EUR_ACCOUNT', { iban: 'DE89370400440532013001' }, 'accountInfo.iban', 'checksum'],
  ['EUR_ACCOUNT', { iban: 'DE8937040044053201300' }, 'accountInfo.iban', 'length'],
  ['EUR_ACCOUNT', { beneficiary: person() }, 'accountInfo.beneficiary.address', 'required'],
  ['DKK_ACCOUNT', { swiftCode: 'DEUTDEFF' }, 'accountInfo.swiftCode', 'country'],
  ['GBP_ACCOUNT', { sortCode: '40-12-76' }, 'accountInfo.sortCode', 'pattern'],
  ['HKD_ACCOUNT', { swiftCode: 'DBSSSGSG' }, 'accountInfo.swiftCode', 'country'],
  ['IDR_ACCOUNT', { phoneNumber: '+62212345678' }, 'accountInfo.phoneNumber', 'format'],
  ['MYR_ACCOUNT', { bankName: 'DBS Bank Ltd' }, 'accountInfo.bankName', 'enum'],
  ['SGD_ACCOUNT', { accountNumber: '12AB' }, 'accountInfo.accountNumber', 'format'],
  ['THB_ACCOUNT', { accountNumber: '123456789' }, 'accountInfo.accountNumber', 'length'],
  ['VND_ACCOUNT', { bankName: 'Nope Bank' }, 'accountInfo.bankName', 'enum'],
  ['NGN_ACCOUNT', { accountNumber: '123456789' }, 'accountInfo.accountNumber', 'pattern'],
  ['PHP_ACCOUNT', { swiftCode: 'BNORPHMM' }, 'accountInfo.swiftCode', 'additionalProperties'],
  ['ZAR_ACCOUNT', { accountNumber: '12345678' }, 'accountInfo.accountNumber', 'pattern'],
  ['INR_ACCOUNT', { vpa: undefined }, 'accountInfo.vpa', 'required'],
  ['INR_ACCOUNT', { vpa: 'priya@' }, 'accountInfo.vpa', 'format'],
  ['INR_ACCOUNT', { vpa: undefined, accountNumber: '123456789012' }, 'accountInfo.ifscCode', 'required'],
  ['INR_ACCOUNT', { vpa: undefined, accountNumber: '123456789012', ifscCode: 'HDFC1000123' }, 'accountInfo.ifscCode', 'pattern'],
  ['AED_ACCOUNT', { iban: 'AE070331234567890123457' }, 'accountInfo.iban', 'checksum'],
  ['EGP_ACCOUNT', { iban: 'EG380019000500000000263180003' }, 'accountInfo.iban', 'checksum'],
  ['PKR_ACCOUNT', { iban: undefined }, 'accountInfo.iban', 'required'],
  ['BDT_ACCOUNT', { phoneNumber: '+8801212345678' }, 'accountInfo.phoneNumber', 'format'],
  ['GHS_ACCOUNT', { accountNumber: undefined, phoneNumber: undefined }, 'accountInfo.accountNumber', 'required'],
  ['KES_ACCOUNT', { phoneNumber: '+255712345678' }, 'accountInfo.phoneNumber', 'pattern'],
  ['KES_ACCOUNT', { provider: '' }, 'accountInfo.provider', 'minLength'],
  ['UGX_ACCOUNT', { phoneNumber: '+254712345678' }, 'accountInfo.phoneNumber', 'country'],
  ['XAF_ACCOUNT', { phoneNumber: '+242061234567' }, 'accountInfo.phoneNumber', 'country'],
  ['XOF_ACCOUNT', { region: 'GH' }, 'accountInfo.region', 'enum'],
  ['HTG_ACCOUNT', { phoneNumber: '+50912345678' }, 'accountInfo.phoneNumber', 'format'],
  ['SPARK_WALLET', { address: 'spark1pgssyuuuhnrrdjswal5c3s3rafw9w3y5dd4cjy3duxlf7hjzkp0rqx6dj6mrhu' }, 'accountInfo.address', 'checksum'],
  ['LIGHTNING', { lightningAddress: 'maria@wallet.example.com' }, 'accountInfo.lightningAddress', 'required'],
  ['LIGHTNING', { invoice: undefined }, 'accountInfo.invoice', 'required'],
  ['LIGHTNING', { invoice: undefined, bolt12: 'lnbc1notanoffer' }, 'accountInfo.bolt12', 'format'],
  ['SOLANA_WALLET', { address: '0Nd1m6Qkq7RfKuE5vQ9qP9Tn6H94Ueqb4xXHzsAbd8Wg' }, 'accountInfo.address', 'format'],
  ['TRON_WALLET', { address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u' }, 'accountInfo.address', 'checksum'],
  ['POLYGON_WALLET', { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD' }, 'accountInfo.address', 'checksum'],
  ['BASE_WALLET', { address: '0x5aaeb6053f3e94c9b9a09f33669435e7ef1bea' }, 'accountInfo.address', 'format'],
  ['ETHEREUM_WALLET', { address: 'vitalik.eth' }, 'accountInfo.address', 'format'],
];

let t: TestApp;
let p: TestPlatform;
let customerId: string;

function body(accountType: string, c: Case, change: Record<string, unknown> = {}) {
  const info: Record<string, unknown> = { accountType, ...c.info, ...change };
  for (const key of Object.keys(info)) if (info[key] === undefined) delete info[key];
  return { customerId, currency: c.currency, accountInfo: info };
}

function expectInvalid(res: ApiResponse, field: string, constraint: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body).toMatchObject({ status: 400, code: 'INVALID_INPUT', message: expect.any(String) });
  expect(res.body.details.errors).toContainEqual({ field, constraint, message: expect.any(String) });
}

beforeAll(async () => {
  t = await startTestApp();
  p = await t.createPlatform();
  customerId = (await p.api.post('/customers', { customerType: 'INDIVIDUAL', fullName: 'Maria Silva', region: 'US' })).body.id;
});
afterAll(() => t.close());

describe('account types', () => {
  it('has a valid fixture for every type', () => {
    expect(Object.keys(VALID).sort()).toEqual(ACCOUNT_TYPES.map((d) => d.accountType).sort());
  });

  it('supports exactly the reference API account types', () => {
    const path = new URL('../../../../shared/reference/openapi-2025-10-13.yaml', import.meta.url);
    if (!existsSync(path)) return;
    const text = readFileSync(path, 'utf8');
    const section = text.slice(text.indexOf('    ExternalAccountCreateInfoOneOf:'), text.indexOf('    ExternalAccountCreateRequest:'));
    const mapped = [...section.matchAll(/^ {10}([A-Z_]+): '#\/components\/schemas\//gm)].map((m) => m[1]);
    expect(mapped.length).toBeGreaterThan(30);
    expect(ACCOUNT_TYPES.map((d) => d.accountType).sort()).toEqual(mapped.sort());
  });
});

describe.each(Object.entries(VALID))('%s', (accountType, c) => {
  it('creates, stores the identifier, and reads back', async () => {
    const created = await p.api.post('/customers/external-accounts', body(accountType, c));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const { accountInfo, ...rest } = created.body;
    expect(rest).toMatchObject({ customerId, currency: c.currency, status: 'ACTIVE', defaultUmaDepositAccount: false });
    expect(accountInfo).toMatchObject({ accountType, ...c.info });
    if (c.rails) expect(accountInfo.paymentRails).toEqual(c.rails);
    const wallet = !('beneficiary' in c.info);
    expect(rest.beneficiaryVerificationStatus).toBe(wallet ? undefined : 'MATCHED');
    if (!wallet) expect(accountInfo.paymentRails.length).toBeGreaterThan(0);

    const row = await t.corridor.database.db.selectFrom('external_accounts').selectAll().where('id', '=', created.body.id).executeTakeFirstOrThrow();
    expect(row.identifier).toBe(c.identifier);
    expect(row.account_type).toBe(accountType);
    expect((await p.api.get(`/customers/external-accounts/${created.body.id}`)).body).toEqual(created.body);
  });

  it('rejects a currency the type does not hold', async () => {
    const other = c.currency === 'USD' ? 'EUR' : 'USD';
    const res = await p.api.post('/customers/external-accounts', { ...body(accountType, c), currency: other });
    expectInvalid(res, 'currency', 'enum');
  });

  it('rejects unknown fields', async () => {
    expectInvalid(await p.api.post('/customers/external-accounts', body(accountType, c, { nickname: 'x' })), 'accountInfo.nickname', 'additionalProperties');
  });
});

describe('field validation', () => {
  it.each(INVALID)('%s %j → %s %s', async (accountType, change, field, constraint) => {
    const res = await p.api.post('/customers/external-accounts', body(accountType, VALID[accountType], change));
    expectInvalid(res, field, constraint);
  });

  it('canonicalizes bankName to the catalogue entry', async () => {
    const res = await p.api.post('/customers/external-accounts', body('PHP_ACCOUNT', VALID.PHP_ACCOUNT, { bankName: 'bank of the philippine islands', accountNumber: '001234567891' }));
    expect(res.status).toBe(201);
    expect(res.body.accountInfo.bankName).toBe('BPI');
  });

  it('accepts an INR bank account with IFSC (IMPS)', async () => {
    const res = await p.api.post('/customers/external-accounts', body('INR_ACCOUNT', VALID.INR_ACCOUNT, { vpa: undefined, accountNumber: '123456789012', ifscCode: 'HDFC0000123' }));
    expect(res.status).toBe(201);
    expect(res.body.accountInfo.paymentRails).toEqual(['IMPS']);
  });

  it('validates the beneficiary: dates, countries, phone, email, type', async () => {
    const usd = VALID.USD_ACCOUNT;
    const bad = (beneficiary: Record<string, unknown>) => p.api.post('/customers/external-accounts', body('USD_ACCOUNT', usd, { beneficiary }));
    expectInvalid(await bad(person({ birthDate: '2999-01-01' })), 'accountInfo.beneficiary.birthDate', 'range');
    expectInvalid(await bad(person({ birthDate: '1990-02-30' })), 'accountInfo.beneficiary.birthDate', 'format');
    expectInvalid(await bad(person({ nationality: 'XX' })), 'accountInfo.beneficiary.nationality', 'country');
    expectInvalid(await bad(person({ nationality: 'usa' })), 'accountInfo.beneficiary.nationality', 'pattern');
    expectInvalid(await bad(person({ countryOfResidence: 'QQ' })), 'accountInfo.beneficiary.countryOfResidence', 'country');
    expectInvalid(await bad(person({ address: { ...address, country: 'ZZ' } })), 'accountInfo.beneficiary.address.country', 'country');
    expectInvalid(await bad(person({ address: { line1: 'x', country: 'US' } })), 'accountInfo.beneficiary.address.postalCode', 'required');
    expectInvalid(await bad(person({ phoneNumber: '555-1234' })), 'accountInfo.beneficiary.phoneNumber', 'pattern');
    expectInvalid(await bad(person({ email: 'not-an-email' })), 'accountInfo.beneficiary.email', 'format');
    expectInvalid(await bad(person({ fullName: '   ' })), 'accountInfo.beneficiary.fullName', 'minLength');
    expectInvalid(await bad({ beneficiaryType: 'BUSINESS', fullName: 'Acme' }), 'accountInfo.beneficiary.legalName', 'required');
    expectInvalid(await p.api.post('/customers/external-accounts', body('USD_ACCOUNT', usd, { beneficiary: undefined })), 'accountInfo.beneficiary', 'required');
  });

  it('reports every problem at once', async () => {
    const res = await p.api.post('/customers/external-accounts', {
      customerId,
      currency: 'EUR',
      accountInfo: { ...VALID.USD_ACCOUNT.info, accountType: 'USD_ACCOUNT', routingNumber: '021000022', bankName: 'Nope', beneficiary: person({ nationality: 'XX' }) },
    });
    expect(res.status).toBe(400);
    expect(res.body.details.errors.map((e: any) => e.field)).toEqual([
      'currency',
      'accountInfo.routingNumber',
      'accountInfo.bankName',
      'accountInfo.beneficiary.nationality',
    ]);
  });

  it('rejects an unknown or missing accountType', async () => {
    const unknown = await p.api.post('/customers/external-accounts', { customerId, currency: 'USD', accountInfo: { accountType: 'CHEQUE' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.details.errors[0].field).toMatch(/^accountInfo/);
    const missing = await p.api.post('/customers/external-accounts', { customerId, currency: 'USD', accountInfo: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('INVALID_INPUT');
  });

  it('nothing invalid is stored', async () => {
    const before = await t.corridor.database.db.selectFrom('external_accounts').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    await p.api.post('/customers/external-accounts', body('MXN_ACCOUNT', VALID.MXN_ACCOUNT, { clabeNumber: '032180000118359718' }));
    const after = await t.corridor.database.db.selectFrom('external_accounts').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
  });
});
