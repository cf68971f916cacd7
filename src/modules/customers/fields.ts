import { Type, type Static } from 'typebox';

// Field schemas that customers share with the beneficial owners of businesses (compliance). They
// live apart from ./schemas.ts because that file embeds compliance's owner view, which uses them.

export const VERIFICATION_STATUSES = ['UNVERIFIED', 'PENDING', 'APPROVED', 'REJECTED'] as const;
export type VerificationStatus = (typeof VERIFICATION_STATUSES)[number];

export const CountryCode = (description: string) => Type.String({ pattern: '^[A-Z]{2}$', description: `${description} (ISO 3166-1 alpha-2).` });
export const CalendarDate = (description: string) => Type.String({ format: 'date', description: `${description} (YYYY-MM-DD).` });
export const Text = (maxLength: number, description: string) => Type.String({ minLength: 1, maxLength, description });
export const Countries = (description: string) =>
  Type.Array(CountryCode('A country'), { maxItems: 250, uniqueItems: true, description });

export const Address = Type.Object(
  {
    line1: Text(200, 'Street and number.'),
    line2: Type.Optional(Text(200, 'Apartment, suite, floor.')),
    city: Type.Optional(Text(100, 'City or locality.')),
    state: Type.Optional(Text(100, 'State, province or region.')),
    postalCode: Text(20, 'Postal or ZIP code.'),
    country: CountryCode('Country'),
  },
  { additionalProperties: false, description: 'Postal address.' },
);
export type Address = Static<typeof Address>;
