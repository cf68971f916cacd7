import { Type, type Static } from 'typebox';
import { StringEnum } from '../../http/common-schemas.js';
import { CRYPTO_NETWORKS } from './networks.js';

export const WithdrawalFeeRequest = Type.Object(
  {
    internalAccountId: Type.String({ minLength: 1, maxLength: 200, description: 'Crypto internal account (INTERNAL_CRYPTO or EMBEDDED_WALLET) the funds would leave.' }),
    currency: Type.String({ pattern: '^[A-Z]{3,5}$', description: 'Asset to withdraw; must be the account\'s currency (e.g. USDC).' }),
    cryptoNetwork: StringEnum(CRYPTO_NETWORKS, { description: 'Blockchain network the withdrawal would use.' }),
    amount: Type.Integer({ minimum: 1, maximum: 9_000_000_000_000_000, description: 'Amount to withdraw, in the smallest unit of the currency.' }),
    destinationAddress: Type.String({ minLength: 1, maxLength: 2000, description: 'Address on that network to send to; checked for the network\'s format.' }),
  },
  { additionalProperties: false },
);
export type WithdrawalFeeRequest = Static<typeof WithdrawalFeeRequest>;

export const WithdrawalFeeEstimate = Type.Object(
  {
    networkFee: Type.Integer({ description: 'Estimated network fee in the smallest unit of networkFeeAsset (lamports, wei, satoshis); informational, not in the withdrawal currency.' }),
    networkFeeAsset: Type.String({ description: 'Asset the network fee is paid in (SOL, ETH, BTC).' }),
    applicationFee: Type.Integer({ description: 'The platform\'s fixed fee for the currency, in its smallest unit (0 when none is configured).' }),
    totalFee: Type.Integer({ description: 'Network fee converted to the withdrawal currency (rounded up) plus the application fee.' }),
    netAmount: Type.Integer({ description: 'What the recipient would receive: amount minus totalFee.' }),
  },
  { title: 'EstimateCryptoWithdrawalFeeResponse' },
);
export type WithdrawalFeeEstimate = Static<typeof WithdrawalFeeEstimate>;
