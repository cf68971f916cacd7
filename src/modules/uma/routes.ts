import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ServiceError } from '../../core/errors.js';
import { errors } from '../../http/common-schemas.js';
import type { Api } from '../../http/types.js';
import type { Services } from '../../services.js';
import { Transaction } from '../transactions/schemas.js';
import { ProtocolError } from './receiver.js';
import { ReceiverUmaLookup, SandboxUmaReceiveRequest, UmaLookupParams, UmaLookupQuery, UmaProviderList, UmaProviderListQuery } from './schemas.js';
import type { UmaService } from './service.js';

/** The API routes (under the version prefix). */
export function umaRoutes(app: Api, { uma }: Services): void {
  app.get(
    '/receiver/uma/:receiverUmaAddress',
    {
      schema: {
        summary: 'Look up an UMA address for payment',
        description:
          'Asks the receiver\'s UMA provider (over the UMA protocol; sandbox addresses are answered locally) which currencies it accepts, ' +
          'with limits, an estimated rate, and the sender information it requires. The `lookupId` is required by POST /quotes with a ' +
          'UMA_ADDRESS destination and is valid for 15 minutes. 404 when the address does not exist, 412/424 when the counterparty fails.',
        tags: ['Cross-Currency Transfers'],
        params: UmaLookupParams,
        querystring: UmaLookupQuery,
        response: { 200: ReceiverUmaLookup, ...errors(404, 412, 424) },
      },
      // Every lookup is a new Lookup with its own id: never shared between callers.
      config: { coalesce: false },
    },
    async (request) => uma.lookupUma(request.ctx, request.params.receiverUmaAddress, request.query),
  );

  app.post(
    '/sandbox/uma/receive',
    {
      schema: {
        summary: 'Simulate an incoming UMA payment (sandbox)',
        description:
          'A sandbox sender pays one of your customers: the payment goes through the approval flow (INCOMING_PAYMENT.PENDING when a ' +
          'webhook endpoint is set) and is credited to the customer\'s account in the receiving currency, or forwarded to their ' +
          'defaultUmaDepositAccount. Sandbox platforms only (403 elsewhere).',
        tags: ['Sandbox'],
        body: SandboxUmaReceiveRequest,
        response: { 200: Transaction, ...errors(403, 404) },
      },
      config: { permission: 'TRANSACT' },
    },
    async (request) => uma.sandboxReceive(request.ctx, request.body),
  );

  app.get(
    '/uma-providers',
    {
      schema: {
        summary: 'List UMA providers',
        description:
          'The counterparty UMA providers this platform has dealt with: domains it looked up or received payments from, and the sandbox ' +
          'provider on sandbox platforms. Newest first unless sortOrder=asc.',
        tags: ['Available UMA Providers'],
        querystring: UmaProviderListQuery,
        response: { 200: UmaProviderList, ...errors() },
      },
    },
    async (request) => uma.listProviders(request.ctx, request.query),
  );
}

async function answer(reply: FastifyReply, work: () => Promise<unknown>): Promise<unknown> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ProtocolError) return reply.code(error.httpStatus).send(error.body());
    // A refusal of the service's own (no WALLET_ENCRYPTION_KEY for a production key, say), in LNURL's error shape.
    if (error instanceof ServiceError) return reply.code(error.status).send({ status: 'ERROR', reason: error.message, code: error.code });
    reply.log.error({ err: error }, 'UMA protocol request failed');
    return reply.code(500).send({ status: 'ERROR', reason: 'unexpected error', code: 'INTERNAL_ERROR' });
  }
}

function queryOf(url: string): string {
  const at = url.indexOf('?');
  return at < 0 ? '' : url.slice(at);
}

/**
 * The UMA protocol endpoints other VASPs call, outside the API prefix and without API credentials
 * (messages are authenticated by their UMA signatures). The Host header names the UMA domain,
 * and so the platform (docs/uma.md, "Domains").
 */
export function umaProtocolRoutes(app: FastifyInstance, uma: UmaService): void {
  const options = { schema: { hide: true }, config: { auth: 'none' as const } };
  /** A body refused before the handler (not JSON, too large, another media type), in LNURL's error shape too. */
  const unreadable = (code: string) => ({
    ...options,
    errorHandler: (error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
      const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400;
      return reply.code(status).send({ status: 'ERROR', reason: `the request cannot be read: ${error.message}`, code });
    },
  });
  app.get('/.well-known/lnurlpubkey', options, (request, reply) => answer(reply, () => uma.protocol.pubkey(request.headers.host)));
  app.get<{ Params: { user: string } }>('/.well-known/lnurlp/:user', options, (request, reply) =>
    answer(reply, () => uma.protocol.lnurlp(request.headers.host, request.params.user, queryOf(request.url))),
  );
  app.post<{ Params: { user: string } }>('/uma/payreq/:user', unreadable('PARSE_PAYREQ_REQUEST_ERROR'), (request, reply) =>
    answer(reply, () => uma.protocol.payreq(request.headers.host, request.params.user, request.body)),
  );
  app.post('/uma/settle', unreadable('INVALID_REQUEST_FORMAT'), (request, reply) => answer(reply, () => uma.protocol.settle(request.headers.host, request.body)));
}
