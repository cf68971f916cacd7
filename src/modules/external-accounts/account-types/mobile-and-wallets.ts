import { StringEnum } from '../../../http/common-schemas.js';
import { Type } from 'typebox';
import {
  checkBolt12Offer,
  checkEvmAddress,
  checkLightningAddress,
  checkLightningInvoice,
  checkSolanaAddress,
  checkSparkAddress,
  checkTronAddress,
} from '../validators/crypto.js';
import { checkMobileNumber } from '../validators/phone.js';
import { problem } from '../validators/problem.js';
import { individualBeneficiary } from './beneficiary.js';
import { checks, define, firstOf, text } from './define.js';
import { field } from './fields.js';

/** A mobile-money wallet in one country: phone number plus operator. */
function mobileMoney(currency: string, country: string, pattern?: string) {
  return define({
    accountType: `${currency}_ACCOUNT`,
    title: `${currency} mobile money`,
    currencies: [currency],
    country,
    fields: { phoneNumber: field.mobileNumber(pattern, `Mobile-money number in E.164 form; must be a ${country} mobile number.`), provider: field.provider() },
    individual: individualBeneficiary(),
    paymentRails: ['MOBILE_MONEY'],
    identifierField: () => 'phoneNumber',
    check: checks({ phoneNumber: (v) => checkMobileNumber(v, country) }),
  });
}

/** CFA franc wallets: one currency over several countries, so the request names the country. */
function cfaMobileMoney(currency: 'XAF' | 'XOF', regions: readonly string[]) {
  return define({
    accountType: `${currency}_ACCOUNT`,
    title: `${currency} mobile money`,
    currencies: [currency],
    fields: {
      phoneNumber: field.mobileNumber(undefined, 'Mobile-money number in E.164 form; must belong to `region`.'),
      provider: field.provider(),
      region: StringEnum(regions, { description: `Country of the wallet: ${regions.join(', ')}.` }),
    },
    individual: individualBeneficiary(),
    paymentRails: ['MOBILE_MONEY'],
    identifierField: () => 'phoneNumber',
    check: (info, problems) => checks({ phoneNumber: (v) => checkMobileNumber(v, String(info.region)) })(info, problems),
  });
}

export const MOBILE_MONEY_TYPES = [
  mobileMoney('KES', 'KE', '^\\+254[0-9]{9}$'),
  mobileMoney('RWF', 'RW', '^\\+250[0-9]{9}$'),
  mobileMoney('TZS', 'TZ', '^\\+255[0-9]{9}$'),
  mobileMoney('ZMW', 'ZM', '^\\+260[0-9]{9}$'),
  mobileMoney('UGX', 'UG'),
  mobileMoney('MWK', 'MW'),
  mobileMoney('BWP', 'BW'),
  cfaMobileMoney('XAF', ['CM', 'CG']),
  cfaMobileMoney('XOF', ['BJ', 'CI', 'SN', 'TG']),
  define({
    accountType: 'HTG_ACCOUNT',
    title: 'HTG mobile money',
    currencies: ['HTG'],
    country: 'HT',
    fields: { phoneNumber: field.mobileNumber(undefined, 'MonCash or NatCash number in E.164 form (+509…).') },
    individual: individualBeneficiary(),
    paymentRails: ['MOBILE_MONEY'],
    identifierField: () => 'phoneNumber',
    check: checks({ phoneNumber: (v) => checkMobileNumber(v, 'HT') }),
  }),
];

function wallet(accountType: string, title: string, currencies: string[], description: string, check: (v: string) => ReturnType<typeof checkEvmAddress>) {
  return define({
    accountType,
    title,
    currencies,
    fields: { address: field.walletAddress(description) },
    paymentRails: [],
    railsFor: () => [],
    identifierField: () => 'address',
    check: checks({ address: check }),
  });
}

const LIGHTNING_DESTINATIONS = ['invoice', 'bolt12', 'lightningAddress'];

export const WALLET_TYPES = [
  wallet('SPARK_WALLET', 'Spark wallet', ['BTC'], 'Spark address (bech32m, sp1… or spark1…); the checksum is verified.', checkSparkAddress),
  define({
    accountType: 'LIGHTNING',
    title: 'Lightning',
    currencies: ['BTC'],
    fields: {
      invoice: Type.Optional(Type.String({ minLength: 1, maxLength: 4000, description: 'BOLT 11 invoice (lnbc…), paid once.' })),
      bolt12: Type.Optional(Type.String({ minLength: 1, maxLength: 4000, description: 'BOLT 12 offer (lno1…), reusable.' })),
      lightningAddress: Type.Optional(Type.String({ minLength: 3, maxLength: 320, description: 'Lightning address, name@domain.' })),
    },
    paymentRails: [],
    railsFor: () => [],
    identifierField: (info) => firstOf(info, LIGHTNING_DESTINATIONS),
    check: (info, problems) => {
      checks({ invoice: checkLightningInvoice, bolt12: checkBolt12Offer, lightningAddress: checkLightningAddress })(info, problems);
      const given = LIGHTNING_DESTINATIONS.filter((name) => text(info, name) !== undefined);
      if (given.length !== 1) {
        problems.push({ field: given[1] ?? 'invoice', ...problem('required', 'give exactly one of invoice, bolt12 or lightningAddress') });
      }
    },
  }),
  wallet('SOLANA_WALLET', 'Solana wallet', ['USDC', 'USDT'], 'Solana address (base58, 32-byte key).', checkSolanaAddress),
  wallet('TRON_WALLET', 'Tron wallet', ['USDT'], 'Tron address (T…, base58check); the checksum is verified.', checkTronAddress),
  wallet('POLYGON_WALLET', 'Polygon wallet', ['USDC'], 'Polygon address, 0x + 40 hex digits (EIP-55 checked when mixed case).', checkEvmAddress),
  wallet('BASE_WALLET', 'Base wallet', ['USDC'], 'Base address, 0x + 40 hex digits (EIP-55 checked when mixed case).', checkEvmAddress),
  wallet('ETHEREUM_WALLET', 'Ethereum wallet', ['USDC'], 'Ethereum L1 address, 0x + 40 hex digits (EIP-55 checked when mixed case).', checkEvmAddress),
];
