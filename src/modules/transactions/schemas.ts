import { Type, type Static } from 'typebox';
import { CurrencySchema, DateTime, StringEnum } from '../../http/common-schemas.js';
import { PageQuery } from '../../http/pagination.js';
import { PaymentInstructions } from '../accounts/schemas.js';
import { FAILURE_DETAILS, FAILURE_REASONS, TRANSACTION_STATUSES } from './lifecycle.js';

const Money = (description: string) =>
  Type.Object(
    {
      amount: Type.Integer({ description: 'Amount in the smallest unit of the currency.' }),
      currency: Type.Object(CurrencySchema.properties, { description: 'Currency of the amount.' }),
    },
    { description },
  );

export const TransactionStatusSchema = StringEnum(TRANSACTION_STATUSES, {
  description:
    'CREATED: in the enum for compatibility; Corridor starts every transaction at PENDING or later. PENDING: quoted or awaiting funds/approval; PROCESSING: funded and under way; COMPLETED: delivered; REJECTED: refused by the receiver; FAILED: did not complete (see failureReason); REFUNDED: could not complete and the funds were returned; EXPIRED: the quote expired unexecuted.',
});
export const TransactionTypeSchema = StringEnum(['INCOMING', 'OUTGOING'], {
  description: 'INCOMING: money arriving to a customer or the platform; OUTGOING: money leaving.',
});

export const TransactionSource = Type.Object(
  {
    sourceType: StringEnum(['ACCOUNT', 'UMA_ADDRESS', 'REALTIME_FUNDING'], { description: 'Where the money comes from.' }),
    accountId: Type.Optional(Type.String({ description: 'Internal or external account the money comes from (ACCOUNT).' })),
    umaAddress: Type.Optional(Type.String({ description: 'UMA address of the sender (UMA_ADDRESS).' })),
    customerId: Type.Optional(Type.String({ description: 'Customer on whose behalf a real-time funded payment was made.' })),
    currency: Type.Optional(Type.String({ description: 'Currency of the source.' })),
  },
  { description: 'The sending side.' },
);
export type TransactionSource = Static<typeof TransactionSource>;

export const TransactionDestination = Type.Object(
  {
    destinationType: StringEnum(['ACCOUNT', 'UMA_ADDRESS'], { description: 'Where the money goes.' }),
    accountId: Type.Optional(Type.String({ description: 'Internal or external account receiving the money (ACCOUNT).' })),
    umaAddress: Type.Optional(Type.String({ description: 'UMA address of the recipient (UMA_ADDRESS).' })),
    currency: Type.Optional(Type.String({ description: 'Currency of the destination.' })),
  },
  { description: 'The receiving side.' },
);
export type TransactionDestination = Static<typeof TransactionDestination>;

export const RateDetails = Type.Object(
  {
    counterpartyMultiplier: Type.Optional(Type.Number({ description: 'Smallest units of the receiving currency per millisatoshi, from the counterparty (outgoing only).' })),
    counterpartyFixedFee: Type.Optional(Type.Integer({ description: 'Fixed fee of the counterparty, in the smallest unit of the receiving currency (outgoing only).' })),
    serviceApiMultiplier: Type.Number({ description: 'Millisatoshis per smallest unit of the sending currency (outgoing), or smallest receiving units per millisatoshi (incoming).' }),
    serviceApiFixedFee: Type.Integer({ description: 'Fixed fee, in the smallest unit of the sending (outgoing) or receiving (incoming) currency.' }),
    serviceApiVariableFeeRate: Type.Number({ description: 'Variable fee as a fraction of the amount.' }),
    serviceApiVariableFeeAmount: Type.Integer({ description: 'Variable fee amount in the smallest unit.' }),
  },
  { description: 'How the rate and fees of the payment were made up.' },
);
export type RateDetails = Static<typeof RateDetails>;

export const Refund = Type.Object(
  {
    reference: Type.String({ description: 'Reference of the refund.' }),
    initiatedAt: DateTime('When the refund started.'),
    settledAt: Type.Optional(DateTime('When the refund settled.')),
    status: StringEnum(['PENDING', 'COMPLETED', 'FAILED'], { description: 'Where the refund stands.' }),
    reason: StringEnum(['TRANSACTION_FAILED', 'USER_CANCELLATION', 'TIMEOUT'], { description: 'Why the funds are refunded.' }),
  },
  { description: 'The refund of a payment that did not complete.' },
);
export type Refund = Static<typeof Refund>;

export const Transaction = Type.Object(
  {
    id: Type.String({ description: 'Transaction identifier (`Transaction:…`).' }),
    status: TransactionStatusSchema,
    type: TransactionTypeSchema,
    source: TransactionSource,
    destination: TransactionDestination,
    customerId: Type.String({ description: 'Customer the payment belongs to (sender of outgoing, recipient of incoming); the platform id for the platform\'s own payments.' }),
    platformCustomerId: Type.String({ description: 'The platform\'s own id for that customer (the platform id for the platform\'s own payments).' }),
    sentAmount: Type.Optional(Money('Amount sent, in the sending currency (outgoing).')),
    receivedAmount: Money('Amount the recipient receives, in the receiving currency.'),
    exchangeRate: Type.Optional(Type.Number({ description: 'Receiving-currency units per one sending-currency unit (cross-currency payments).' })),
    fees: Type.Optional(Type.Integer({ description: 'Fees included, in the smallest unit of the sending currency.' })),
    quoteId: Type.Optional(Type.String({ description: 'Quote this payment executes.' })),
    paymentInstructions: Type.Optional(Type.Array(PaymentInstructions, { description: 'How to fund the payment (real-time funded quotes).' })),
    refund: Type.Optional(Refund),
    settledAt: Type.Optional(DateTime('When the payment settled, or is expected to.')),
    createdAt: DateTime('When the transaction was created.'),
    updatedAt: DateTime('When it last changed.'),
    agentId: Type.Optional(Type.String({ description: 'Agent that initiated the payment; absent for platform-initiated payments.' })),
    description: Type.Optional(Type.String({ description: 'Memo given when the payment was made.' })),
    counterpartyInformation: Type.Optional(
      Type.Object({}, { additionalProperties: true, description: 'What is known about the counterparty (FULL_NAME, BIRTH_DATE, NATIONALITY, …).' }),
    ),
    reconciliationInstructions: Type.Optional(
      Type.Object(
        { reference: Type.String({ description: 'Unique reference to quote with the payment so it can be matched.' }) },
        { description: 'How to match this payment in bank statements; present once the transaction is past CREATED.' },
      ),
    ),
    rateDetails: Type.Optional(RateDetails),
    failureReason: Type.Optional(StringEnum(FAILURE_REASONS, { description: 'Why the payment ended without completing: on FAILED payments, and QUOTE_EXPIRED on EXPIRED ones (a payment the platform refused carries rejectionReason instead).' })),
    failureDetail: Type.Optional(
      StringEnum(FAILURE_DETAILS, { description: 'Corridor extension: what the rail reported, finer than failureReason.' }),
    ),
    rejectionReason: Type.Optional(
      Type.String({ description: 'Corridor extension: the reason the platform gave when it refused this incoming payment (reject call or webhook answer).' }),
    ),
  },
  { title: 'Transaction' },
);
export type TransactionView = Static<typeof Transaction>;

export const TransactionListQuery = Type.Object({
  customerId: Type.Optional(Type.String({ maxLength: 200, description: 'Only this customer\'s payments; the platform id selects the platform\'s own.' })),
  platformCustomerId: Type.Optional(Type.String({ maxLength: 200, description: 'Only payments of the customer with this platform id.' })),
  accountIdentifier: Type.Optional(Type.String({ maxLength: 300, description: 'Account id or UMA address on either side.' })),
  senderAccountIdentifier: Type.Optional(Type.String({ maxLength: 300, description: 'Account id or UMA address of the sending side.' })),
  receiverAccountIdentifier: Type.Optional(Type.String({ maxLength: 300, description: 'Account id or UMA address of the receiving side.' })),
  status: Type.Optional(TransactionStatusSchema),
  type: Type.Optional(TransactionTypeSchema),
  reference: Type.Optional(Type.String({ maxLength: 100, description: 'The reconciliation reference.' })),
  startDate: Type.Optional(DateTime('Created at or after this time.')),
  endDate: Type.Optional(DateTime('Created at or before this time.')),
  sortOrder: Type.Optional(StringEnum(['asc', 'desc'], { description: 'By creation time; default desc (newest first).', default: 'desc' })),
  ...PageQuery,
});
export type TransactionListQuery = Static<typeof TransactionListQuery>;

export const ApprovePayment = Type.Object(
  {
    receiverCustomerInfo: Type.Optional(
      Type.Object({}, { additionalProperties: true, description: 'Information about the recipient that the sender asked for.' }),
    ),
  },
  { additionalProperties: false },
);
export const RejectPayment = Type.Object(
  { reason: Type.Optional(Type.String({ maxLength: 500, description: 'Why the payment is refused (for your records); shown as the transaction\'s rejectionReason.' })) },
  { additionalProperties: false },
);
