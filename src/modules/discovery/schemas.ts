import { Type } from 'typebox';

export const DiscoveryQuery = Type.Object({
  country: Type.Optional(
    Type.String({ pattern: '^[A-Za-z]{2}$', description: 'Only institutions in this country (ISO 3166-1 alpha-2, e.g. PH).' }),
  ),
  currency: Type.Optional(
    Type.String({ pattern: '^[A-Za-z]{3}$', description: 'Only institutions that receive this currency (ISO 4217, e.g. PHP).' }),
  ),
});

export const DiscoveryItem = Type.Object(
  {
    bankName: Type.String({ description: 'Stable key of the institution or rail: send it as `accountInfo.bankName` when creating an external account.' }),
    displayName: Type.String({ description: 'Name to show to people; may change between releases.' }),
    country: Type.String({ description: 'ISO 3166-1 alpha-2 country of the institution.' }),
    currency: Type.String({ description: 'ISO 4217 currency the institution receives.' }),
  },
  { title: 'DiscoveryItem' },
);

export const DiscoveryList = Type.Object({
  data: Type.Array(DiscoveryItem, { description: 'Institutions and rails matching the filters (not paginated).' }),
});
