import { errors, IdParam } from '../../http/common-schemas.js';
import type { Api } from '../../http/types.js';
import type { Services } from '../../services.js';
import { Transaction } from '../transactions/schemas.js';
import { ExecuteHeaders, ExternalAccountLookup, LookupQuery, Quote, QuoteRequest, SandboxSendRequest } from './schemas.js';

const QuoteId = IdParam('quoteId', 'Quote identifier (`Quote:…`).');
const TAGS = ['Cross-Currency Transfers'];

export function quoteRoutes(app: Api, { quotes }: Services): void {
  app.post(
    '/quotes',
    {
      schema: {
        summary: 'Create a quote',
        description:
          'Locks the exchange rate and fees of one payment until `expiresAt`, and creates its transaction (PENDING). ' +
          'Execute it with POST /quotes/{quoteId}/execute, or pass `immediatelyExecute: true`. REALTIME_FUNDING quotes return ' +
          '`paymentInstructions` and execute when the payment arrives. Supports `Idempotency-Key`.',
        tags: TAGS,
        body: QuoteRequest,
        response: { 201: Quote, ...errors(403, 404, 409, 501) },
      },
      config: { permission: 'TRANSACT' },
    },
    async (request, reply) => {
      reply.code(201);
      return quotes.createQuote(request.ctx, request.body);
    },
  );

  app.get(
    '/quotes/:quoteId',
    { schema: { summary: 'Get a quote', tags: TAGS, params: QuoteId, response: { 200: Quote, ...errors(404) } } },
    async (request) => quotes.getQuote(request.ctx, request.params.quoteId),
  );

  app.post(
    '/quotes/:quoteId/execute',
    {
      schema: {
        summary: 'Execute a quote',
        description:
          'Starts the payment: the source is debited (held until the payout settles) and the transaction moves to PROCESSING. ' +
          '409 QUOTE_EXPIRED after `expiresAt`, 409 QUOTE_ALREADY_EXECUTED when it already ran, 409 QUOTE_PENDING_APPROVAL while ' +
          "an agent's execution of it waits for approval; 400 INSUFFICIENT_FUNDS leaves " +
          'the quote PENDING with nothing held. EMBEDDED_WALLET sources need `Service-Wallet-Signature`. Supports `Idempotency-Key`.',
        tags: TAGS,
        params: QuoteId,
        headers: ExecuteHeaders,
        response: { 200: Quote, ...errors(403, 404, 409) },
      },
      config: { permission: 'TRANSACT' },
    },
    async (request) => quotes.executeQuote(request.ctx, request.params.quoteId, { 'service-wallet-signature': request.headers['service-wallet-signature'] }),
  );

  app.get(
    '/receiver/external-account/:accountId',
    {
      schema: {
        summary: 'Look up an external account for payment',
        description:
          'What the account can receive (currency, estimated rate, limits) and which sender information a quote must carry. ' +
          'The returned `lookupId` can be passed to POST /quotes for 15 minutes. Give `customerId` or `senderUmaAddress`.',
        tags: TAGS,
        params: IdParam('accountId', 'External account to look up (`ExternalAccount:…`).'),
        querystring: LookupQuery,
        response: { 200: ExternalAccountLookup, ...errors(404) },
      },
      // Every lookup is a new Lookup with its own id: never shared between callers.
      config: { coalesce: false },
    },
    async (request) => quotes.lookupExternalAccount(request.ctx, request.params.accountId, request.query),
  );

  app.post(
    '/sandbox/send',
    {
      schema: {
        summary: 'Simulate the funding payment of a quote (sandbox)',
        description:
          'Pays a REALTIME_FUNDING quote as its payment instructions ask. The exact amount executes the quote; any other amount ' +
          'is returned to the payer and the transaction fails with FUNDING_AMOUNT_MISMATCH. 409 when the quote expired or was ' +
          'already funded. Sandbox platforms only (403 elsewhere).',
        tags: ['Sandbox'],
        body: SandboxSendRequest,
        response: { 200: Transaction, ...errors(403, 404, 409) },
      },
      config: { permission: 'TRANSACT' },
    },
    async (request) => quotes.sandboxSend(request.ctx, request.body),
  );
}
