import { errors, IdParam } from '../../http/common-schemas.js';
import { PageOf } from '../../http/pagination.js';
import type { Api } from '../../http/types.js';
import { optionalBody } from '../../http/validation.js';
import type { Services } from '../../services.js';
import { ApprovePayment, RejectPayment, Transaction, TransactionListQuery } from './schemas.js';

const TransactionId = IdParam('transactionId', 'Transaction identifier (`Transaction:…`).');
const TAGS = ['Transactions'];

export function transactionRoutes(app: Api, { transactions, incomingPayments }: Services): void {
  app.get(
    '/transactions',
    {
      schema: {
        summary: 'List transactions',
        description: 'Incoming and outgoing payments, newest first unless `sortOrder=asc`; every filter narrows the list.',
        tags: TAGS,
        querystring: TransactionListQuery,
        response: { 200: PageOf(Transaction, 'transactions'), ...errors() },
      },
    },
    async (request) => transactions.list(request.ctx, request.query),
  );

  app.get(
    '/transactions/:transactionId',
    {
      schema: { summary: 'Get a transaction', tags: TAGS, params: TransactionId, response: { 200: Transaction, ...errors(404) } },
    },
    async (request) => transactions.get(request.ctx, request.params.transactionId),
  );

  app.post(
    '/transactions/:transactionId/approve',
    {
      schema: {
        summary: 'Approve an incoming payment',
        description: 'For an incoming payment waiting for the platform (its INCOMING_PAYMENT.PENDING webhook was answered 202): credits the recipient and completes it. 409 when it is not waiting.',
        tags: TAGS,
        params: TransactionId,
        body: ApprovePayment,
        response: { 200: Transaction, ...errors(404, 409) },
      },
      config: { permission: 'TRANSACT' },
      preValidation: optionalBody,
    },
    async (request) => incomingPayments.approve(request.ctx, request.params.transactionId, request.body?.receiverCustomerInfo as Record<string, unknown> | undefined),
  );

  app.post(
    '/transactions/:transactionId/reject',
    {
      schema: {
        summary: 'Reject an incoming payment',
        description: 'Refuses an incoming payment waiting for the platform; nothing is credited. 409 when it is not waiting.',
        tags: TAGS,
        params: TransactionId,
        body: RejectPayment,
        response: { 200: Transaction, ...errors(404, 409) },
      },
      config: { permission: 'TRANSACT' },
      preValidation: optionalBody,
    },
    async (request) => incomingPayments.reject(request.ctx, request.params.transactionId, request.body?.reason),
  );
}
