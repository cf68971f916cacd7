import { invalidInput, ServiceError } from '../../core/errors.js';
import type { ExternalAccountRecord } from '../external-accounts/service.js';
import type { Platform } from '../platform/service.js';
import type { LookupRecord } from './repository.js';
import type { RequiredPayerField } from './schemas.js';
import type { DestinationRequest, QuoteDestinationHandler, QuoteServiceDeps, ResolvedDestination } from './types.js';

/** The receiver's requirements for a currency: the platform's requiredCounterpartyFields. */
export function payerFieldsFor(platform: Platform, currency: string): RequiredPayerField[] {
  const entry = platform.supportedCurrencies.find((c) => c.currencyCode === currency);
  return (entry?.requiredCounterpartyFields ?? []).map((f) => ({ name: f.name, mandatory: f.mandatory }));
}

/** A lookup the quote may use: this platform's, unexpired (on the platform clock). */
export async function liveLookup(request: DestinationRequest, now: Date): Promise<LookupRecord | undefined> {
  if (!request.lookupId) return undefined;
  const lookup = await request.findLookup(request.lookupId);
  if (!lookup) throw new ServiceError('LOOKUP_REQUEST_NOT_FOUND', 'lookup not found');
  if (lookup.expiresAt <= now) {
    throw invalidInput('lookupId', 'this lookup has expired; look the receiver up again', 'expired');
  }
  return lookup;
}

/** FULL_NAME and friends from an external account's beneficiary, when it has one. */
function recipientInformation(account: ExternalAccountRecord): Record<string, unknown> | null {
  const beneficiary = (account.accountInfo as { beneficiary?: Record<string, unknown> }).beneficiary;
  if (!beneficiary) return null;
  const map: Array<[string, unknown]> = [
    ['FULL_NAME', beneficiary.fullName ?? beneficiary.legalName],
    ['BIRTH_DATE', beneficiary.birthDate],
    ['NATIONALITY', beneficiary.nationality],
    ['COUNTRY_OF_RESIDENCE', beneficiary.countryOfResidence],
  ];
  const info = Object.fromEntries(map.filter(([, value]) => typeof value === 'string'));
  return Object.keys(info).length > 0 ? info : null;
}

function checkLookupFor(lookup: LookupRecord | undefined, accountId: string): void {
  if (lookup && (lookup.kind !== 'EXTERNAL_ACCOUNT' || lookup.accountId !== accountId)) {
    throw invalidInput('lookupId', 'this lookup is for a different receiver than destination.accountId', 'mismatch');
  }
}

function chooseRail(account: ExternalAccountRecord, requested: string | undefined): string | undefined {
  if (requested === undefined) return account.paymentRails[0];
  if (!account.paymentRails.includes(requested)) {
    const allowed = account.paymentRails.join(', ') || 'none';
    throw invalidInput('destination.paymentRail', `this account is reached by ${allowed}, not ${requested}`, 'enum');
  }
  return requested;
}

/** ACCOUNT destinations: an external account (payout through the rail) or an internal account (conversion). */
export function accountDestinations(deps: Pick<QuoteServiceDeps, 'clock' | 'accounts' | 'externalAccounts'>): QuoteDestinationHandler {
  async function external(request: DestinationRequest, accountId: string): Promise<ResolvedDestination> {
    const { ctx } = request;
    const [account, lookup] = await Promise.all([
      deps.externalAccounts.findExternalAccount(request.ex, ctx.platform.id, accountId, request.checks),
      liveLookup(request, deps.clock.now(ctx.platform)),
    ]);
    if (!account) throw new ServiceError('NOT_FOUND', 'destination account not found');
    checkLookupFor(lookup, account.id);
    if (account.status === 'INACTIVE') {
      const message = 'this external account is INACTIVE and cannot receive payments';
      throw new ServiceError('INVALID_BANK_ACCOUNT', message, { details: { errors: [{ field: 'destination.accountId', constraint: 'status', message }] } });
    }
    const rail = chooseRail(account, request.destination.destinationType === 'ACCOUNT' ? request.destination.paymentRail : undefined);
    return {
      view: { destinationType: 'ACCOUNT', accountId: account.id, ...(rail && { paymentRail: rail }) },
      transactionDestination: { destinationType: 'ACCOUNT', accountId: account.id, currency: account.currency },
      currency: account.currency,
      delivery: { kind: 'RAIL', externalAccountId: account.id, identifier: account.identifier, accountType: account.accountType },
      requiredPayerDataFields: lookup ? lookup.requiredPayerDataFields : payerFieldsFor(ctx.platform, account.currency),
      counterpartyInformation: recipientInformation(account),
      lookup: lookup ?? null,
    };
  }

  async function internal(request: DestinationRequest, accountId: string): Promise<ResolvedDestination> {
    const { ctx } = request;
    if (request.lookupId) throw invalidInput('lookupId', 'internal-account destinations take no lookup', 'unexpected');
    if (request.destination.destinationType === 'ACCOUNT' && request.destination.paymentRail) {
      throw invalidInput('destination.paymentRail', 'internal-account destinations take no payment rail', 'unexpected');
    }
    const account = await deps.accounts.getAccount(request.ex, ctx.platform.id, accountId).catch((error: unknown) => {
      if (error instanceof ServiceError && error.code === 'NOT_FOUND') throw new ServiceError('NOT_FOUND', 'destination account not found');
      throw error;
    });
    return {
      view: { destinationType: 'ACCOUNT', accountId: account.id },
      transactionDestination: { destinationType: 'ACCOUNT', accountId: account.id, currency: account.currency },
      currency: account.currency,
      delivery: { kind: 'INTERNAL', accountId: account.id },
      requiredPayerDataFields: [],
      counterpartyInformation: null,
      lookup: null,
    };
  }

  return {
    destinationType: 'ACCOUNT',
    async resolve(request) {
      if (request.destination.destinationType !== 'ACCOUNT') throw new Error('ACCOUNT handler called for another destination type');
      const id = request.destination.accountId;
      if (id.startsWith('InternalAccount:')) return internal(request, id);
      if (id.startsWith('ExternalAccount:')) return external(request, id);
      throw new ServiceError('NOT_FOUND', 'destination account not found');
    },
  };
}

/**
 * UMA_ADDRESS destinations until the UMA module plugs in its handler: a lookupId is required,
 * and no lookup can be resolved yet, so every such quote is refused with a clear 400.
 */
export const umaDestinationsUnavailable: QuoteDestinationHandler = {
  destinationType: 'UMA_ADDRESS',
  async resolve(request) {
    if (!request.lookupId) {
      throw invalidInput('lookupId', 'UMA destinations need the lookupId of GET /receiver/uma/{receiverUmaAddress}', 'required');
    }
    throw invalidInput('lookupId', 'this lookup cannot be used for an UMA payment: UMA payments are not enabled on this server yet', 'lookup');
  },
};
