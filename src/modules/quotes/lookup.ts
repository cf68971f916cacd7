import { currency } from '../../core/currencies.js';
import { ServiceError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { Customer } from '../customers/service.js';
import type { Platform } from '../platform/service.js';
import { payerFieldsFor } from './destinations.js';
import * as repo from './repository.js';
import type { ExternalAccountLookupView, LookupQuery } from './schemas.js';
import type { QuoteContext, QuoteServiceDeps } from './types.js';

/** How long a lookup's lookupId can be used for a quote (platform clock). */
export const LOOKUP_LIFETIME_MS = 15 * 60_000;

const UMA_ADDRESS = /^\$[A-Za-z0-9._+-]{1,64}@[A-Za-z0-9.-]{1,253}(:[0-9]{1,5})?$/;

function fieldError(code: 'INVALID_INPUT' | 'INVALID_UMA_ADDRESS', field: string, constraint: string, message: string): ServiceError {
  return new ServiceError(code, message, { details: { errors: [{ field, constraint, message }] } });
}

/**
 * The currency an estimate converts from: the sending customer's first currency that can pay
 * out, else the platform's first such currency.
 */
function senderCurrencyFor(platform: Platform, customer: Customer | null, fallback: string): string {
  const outgoing = platform.supportedCurrencies.filter((c) => c.enabledTransactionTypes.includes('OUTGOING')).map((c) => c.currencyCode);
  return customer?.currencies.find((code) => outgoing.includes(code)) ?? outgoing[0] ?? fallback;
}

/** GET /receiver/external-account/{accountId}: what the account receives, and what it needs to know. */
export function createLookups(deps: QuoteServiceDeps) {
  const { database, clock, externalAccounts, customers, rates } = deps;

  async function lookupExternalAccount(ctx: QuoteContext, accountId: string, query: LookupQuery): Promise<ExternalAccountLookupView> {
    const { platform } = ctx;
    if (!query.customerId && !query.senderUmaAddress) {
      throw fieldError('INVALID_INPUT', 'querystring.customerId', 'required', 'give customerId or senderUmaAddress to say who is sending');
    }
    if (query.senderUmaAddress && !UMA_ADDRESS.test(query.senderUmaAddress)) {
      throw fieldError('INVALID_UMA_ADDRESS', 'querystring.senderUmaAddress', 'format', 'must look like $name@domain');
    }
    const [account, customer] = await Promise.all([
      externalAccounts.findExternalAccount(database.db, platform.id, accountId),
      query.customerId ? customers.requireCustomer(database.db, platform.id, query.customerId) : null,
    ]);
    if (!account) throw new ServiceError('NOT_FOUND', 'external account not found');
    const config = platform.supportedCurrencies.find((c) => c.currencyCode === account.currency);
    if (!config) {
      throw new ServiceError('INVALID_CURRENCY', `this account receives ${account.currency}, which is not enabled for this platform`);
    }
    const from = senderCurrencyFor(platform, customer, account.currency);
    const supportedCurrencies = [
      {
        currency: currency(account.currency),
        estimatedExchangeRate: await rates.estimateRate(platform, from, account.currency),
        min: Math.max(1, config.minAmount),
        max: config.maxAmount,
      },
    ];
    const requiredPayerDataFields = payerFieldsFor(platform, account.currency);
    const now = clock.now(platform);
    const id = newId('Lookup');
    await repo.insertLookup(database.db, {
      id,
      platformId: platform.id,
      kind: 'EXTERNAL_ACCOUNT',
      accountId: account.id,
      receiverUmaAddress: null,
      customerId: customer?.id ?? null,
      senderUmaAddress: query.senderUmaAddress ?? null,
      supportedCurrencies,
      requiredPayerDataFields,
      expiresAt: new Date(now.getTime() + LOOKUP_LIFETIME_MS),
      createdAt: now,
    });
    return { lookupId: id, accountId: account.id, supportedCurrencies, requiredPayerDataFields };
  }

  return { lookupExternalAccount };
}
