import { Type, type Static } from 'typebox';
import { CurrencyCode, CurrencySchema, StringEnum } from '../../http/common-schemas.js';
import { PageOf, PageQuery } from '../../http/pagination.js';
import { CurrencyPreference, RequiredPayerField } from '../quotes/schemas.js';

const MAX_AMOUNT = 9_000_000_000_000_000;
const Address = (description: string) => Type.String({ minLength: 1, maxLength: 320, description });

export const UmaLookupParams = Type.Object({
  receiverUmaAddress: Address('UMA address to pay, e.g. `$bob@example.com` (URL-encode `$` and `@` if your client needs to).'),
});

export const UmaLookupQuery = Type.Object({
  senderUmaAddress: Type.Optional(Address('UMA address of the sender, on this platform\'s UMA domain (or give customerId).')),
  customerId: Type.Optional(Type.String({ maxLength: 200, description: 'Sending customer; their UMA address identifies the sender (or give senderUmaAddress).' })),
});
export type UmaLookupQuery = Static<typeof UmaLookupQuery>;

export const ReceiverUmaLookup = Type.Object(
  {
    lookupId: Type.String({ description: 'Pass it as `lookupId` to POST /quotes with a UMA_ADDRESS destination (`Lookup:…`); valid for 15 minutes.' }),
    receiverUmaAddress: Type.String({ description: 'The UMA address looked up.' }),
    supportedCurrencies: Type.Array(CurrencyPreference, { description: 'Currencies the receiver accepts (and this platform supports), in the receiver\'s order of preference.' }),
    requiredPayerDataFields: Type.Array(RequiredPayerField, { description: 'Sender information the receiver asks for; give it in the quote\'s `senderCustomerInfo`.' }),
  },
  { title: 'ReceiverUmaLookupResponse' },
);
export type ReceiverUmaLookupView = Static<typeof ReceiverUmaLookup>;

export const SandboxUmaReceiveRequest = Type.Object(
  {
    senderUmaAddress: Address('UMA address of the simulated sender, e.g. `$success.usd@sandbox.uma.money`.'),
    receiverUmaAddress: Type.Optional(Address('UMA address of the receiving customer (or give customerId).')),
    customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Receiving customer (or give receiverUmaAddress).' })),
    receivingCurrencyCode: CurrencyCode('Currency the customer receives.'),
    receivingCurrencyAmount: Type.Integer({ minimum: 1, maximum: MAX_AMOUNT, description: 'Amount received, in the smallest unit of receivingCurrencyCode.' }),
  },
  { additionalProperties: false, title: 'SandboxUmaReceiveRequest' },
);
export type SandboxUmaReceiveRequest = Static<typeof SandboxUmaReceiveRequest>;

export const UmaProvider = Type.Object(
  {
    name: Type.String({ description: 'Name of the provider (its domain when it published none).' }),
    domain: Type.String({ description: 'UMA domain of the provider\'s addresses.' }),
    supportedRegions: Type.Optional(Type.Array(Type.String(), { description: 'Countries the provider serves (ISO 3166-1 alpha-2), when known.' })),
    supportedCurrencies: Type.Array(Type.Object(CurrencySchema.properties, { description: 'A currency.' }), {
      description: 'Currencies seen from this provider (offered in its lookups or paid in its payments).',
    }),
    allowListStatus: Type.Boolean({ description: 'Whether payments with this provider are allowed; Corridor keeps no block list, so always true.' }),
  },
  { title: 'UmaProvider' },
);
export type UmaProviderView = Static<typeof UmaProvider>;

export const UmaProviderListQuery = Type.Object({
  countryCode: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$', description: 'Only providers serving this country (ISO 3166-1 alpha-2).' })),
  currencyCode: Type.Optional(CurrencyCode('Only providers seen with this currency.')),
  hasBlockedProviders: Type.Optional(Type.Boolean({ description: 'Accepted for compatibility; no provider is blocked, so it changes nothing.' })),
  sortOrder: Type.Optional(StringEnum(['asc', 'desc'], { description: 'By when the provider was first seen; default desc.', default: 'desc' })),
  ...PageQuery,
});
export type UmaProviderListQuery = Static<typeof UmaProviderListQuery>;

export const UmaProviderList = PageOf(UmaProvider, 'providers');
