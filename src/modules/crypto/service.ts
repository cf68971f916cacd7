import type { ServiceContext } from '../../core/context.js';
import { currency as currencyOf } from '../../core/currencies.js';
import { invalidInput, ServiceError } from '../../core/errors.js';
import type { Database } from '../../db/database.js';
import type { AccountService } from '../accounts/service.js';
import type { Platform } from '../platform/service.js';
import { Dec } from '../rates/decimal.js';
import type { RateService } from '../rates/service.js';
import { NETWORKS } from './networks.js';
import type { WithdrawalFeeEstimate, WithdrawalFeeRequest } from './schemas.js';

export interface CryptoServiceDeps {
  database: Database;
  accounts: Pick<AccountService, 'getAccount'>;
  rates: Pick<RateService, 'getRates'>;
}

/** Crypto withdrawals: fee estimates for moving an asset from a crypto account to an address. */
export function createCryptoService({ database, accounts, rates }: CryptoServiceDeps) {
  /** Converts `amount` smallest units of `from` into smallest units of `to`, rounded up (the house's way). */
  async function convertUp(amount: number, from: string, to: string): Promise<number> {
    if (amount === 0 || from === to) return amount;
    const { usdPrices } = await rates.getRates();
    const fromPrice = usdPrices.get(from);
    const toPrice = usdPrices.get(to);
    if (!fromPrice || !toPrice) throw new ServiceError('INVALID_CURRENCY', `no rate between ${from} and ${to}`);
    const scale = new Dec(10).pow(currencyOf(to).decimals - currencyOf(from).decimals);
    return new Dec(amount).times(fromPrice).div(toPrice).times(scale).ceil().toNumber();
  }

  async function estimateWithdrawalFee(ctx: ServiceContext<Platform>, input: WithdrawalFeeRequest): Promise<WithdrawalFeeEstimate> {
    const account = await accounts.getAccount(database.db, ctx.platform.id, input.internalAccountId);
    if (account.type === 'INTERNAL_FIAT') throw invalidInput('internalAccountId', 'the account holds fiat; only crypto accounts withdraw on chain', 'type');
    if (input.currency !== account.currency) {
      throw invalidInput('currency', `the account holds ${account.currency}, not ${input.currency}`, 'currency');
    }
    const network = NETWORKS[input.cryptoNetwork];
    if (!network.assets.includes(input.currency)) {
      throw invalidInput('cryptoNetwork', `${input.currency} cannot be withdrawn on ${input.cryptoNetwork}`, 'asset');
    }
    const addressProblem = network.checkAddress(input.destinationAddress);
    if (addressProblem) throw invalidInput('destinationAddress', addressProblem.message, addressProblem.constraint);

    const networkFee = network.networkFee(input.currency);
    const applicationFee = ctx.platform.fees.fixedFees.find((f) => f.currencyCode === input.currency)?.amount ?? 0;
    const totalFee = (await convertUp(networkFee, network.feeAsset, input.currency)) + applicationFee;
    if (input.amount <= totalFee) {
      throw new ServiceError('AMOUNT_OUT_OF_RANGE', `amount must be more than the total fee of ${totalFee}`, {
        details: { errors: [{ field: 'amount', constraint: 'minimum', message: `must be more than ${totalFee}` }], totalFee },
      });
    }
    return { networkFee, networkFeeAsset: network.feeAsset, applicationFee, totalFee, netAmount: input.amount - totalFee };
  }

  return { estimateWithdrawalFee };
}

export type CryptoService = ReturnType<typeof createCryptoService>;
