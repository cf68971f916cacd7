import type { Clock } from '../../core/clock.js';
import { invalidInput, ServiceError } from '../../core/errors.js';
import { liveLookup } from '../quotes/destinations.js';
import type { DestinationRequest, QuoteDestinationHandler, ResolvedDestination } from '../quotes/types.js';
import { parseUmaAddress } from './address.js';
import type { UmaPayer } from './payer.js';

/**
 * UMA_ADDRESS destinations for quotes: resolved from a UMA lookup (required), delivered by the UMA
 * payer (the pay request and its settlement, or the sandbox outcome).
 */
export function createUmaDestinations(deps: { clock: Clock; payer: UmaPayer }): QuoteDestinationHandler {
  async function resolve(request: DestinationRequest): Promise<ResolvedDestination> {
    const { destination, ctx } = request;
    if (destination.destinationType !== 'UMA_ADDRESS') throw new Error('UMA handler called for another destination type');
    if (!request.lookupId) {
      throw invalidInput('lookupId', 'UMA destinations need the lookupId of GET /receiver/uma/{receiverUmaAddress}', 'required');
    }
    const receiver = parseUmaAddress(destination.umaAddress);
    if (!receiver) {
      const message = 'destination.umaAddress must look like $name@domain';
      throw new ServiceError('INVALID_UMA_ADDRESS', message, { details: { errors: [{ field: 'destination.umaAddress', constraint: 'format', message }] } });
    }
    const lookup = (await liveLookup(request, deps.clock.now(ctx.platform)))!;
    if (lookup.kind !== 'UMA' || lookup.receiverUmaAddress?.toLowerCase() !== receiver.address.toLowerCase()) {
      throw invalidInput('lookupId', 'this lookup is for a different receiver than destination.umaAddress', 'mismatch');
    }
    const code = destination.currency ?? lookup.supportedCurrencies[0]?.currency.code;
    const accepted = lookup.supportedCurrencies.find((c) => c.currency.code === code);
    if (!code || !accepted) {
      const offered = lookup.supportedCurrencies.map((c) => c.currency.code).join(', ') || 'none';
      const message = `the receiver accepts ${offered}${code ? `, not ${code}` : ''}`;
      throw new ServiceError('INVALID_CURRENCY', message, { details: { errors: [{ field: 'destination.currency', constraint: 'supported', message }] } });
    }
    const umaAddress = lookup.receiverUmaAddress!;
    return {
      view: { destinationType: 'UMA_ADDRESS', umaAddress, currency: code },
      transactionDestination: { destinationType: 'UMA_ADDRESS', umaAddress, currency: code },
      currency: code,
      delivery: { kind: 'UMA', lookupId: lookup.id, receiverUmaAddress: umaAddress, payerFields: lookup.requiredPayerDataFields.map((f) => f.name) },
      requiredPayerDataFields: lookup.requiredPayerDataFields,
      counterpartyInformation: null,
      lookup,
      receivingLimits: { min: accepted.min, max: accepted.max },
    };
  }

  return { destinationType: 'UMA_ADDRESS', resolve, deliver: (platform, quote) => deps.payer.deliver(platform, quote) };
}
