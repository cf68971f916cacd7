import { Type, type Static } from 'typebox';

const MAX_AMOUNT = 9_000_000_000_000_000;

const AccountRef = (description: string, idDescription: string) =>
  Type.Object(
    { accountId: Type.String({ minLength: 1, maxLength: 200, description: idDescription }) },
    { additionalProperties: false, description },
  );

const TransferAmount = Type.Integer({
  minimum: 1,
  maximum: MAX_AMOUNT,
  description: 'Amount in the smallest unit of the accounts\' currency (cents for USD); within the platform\'s minAmount and maxAmount for that currency.',
});

export const TransferInRequest = Type.Object(
  {
    source: AccountRef('The external account the money is pulled from.', 'External account to pull from (`ExternalAccount:…`).'),
    destination: AccountRef('The internal account credited.', 'Internal account to credit (`InternalAccount:…`), in the same currency.'),
    amount: TransferAmount,
  },
  { additionalProperties: false, title: 'TransferInRequest' },
);
export type TransferInRequest = Static<typeof TransferInRequest>;

export const TransferOutRequest = Type.Object(
  {
    source: AccountRef('The internal account the money leaves.', 'Internal account to debit (`InternalAccount:…`).'),
    destination: AccountRef('The external account paid.', 'External account to pay (`ExternalAccount:…`), in the same currency.'),
    amount: TransferAmount,
  },
  { additionalProperties: false, title: 'TransferOutRequest' },
);
export type TransferOutRequest = Static<typeof TransferOutRequest>;

/** What both transfer directions take (the request bodies have the same shape). */
export interface TransferInput {
  source: { accountId: string };
  destination: { accountId: string };
  amount: number;
}
