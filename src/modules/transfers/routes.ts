import { errors } from '../../http/common-schemas.js';
import type { Api } from '../../http/types.js';
import type { Services } from '../../services.js';
import { Transaction } from '../transactions/schemas.js';
import { TransferInRequest, TransferOutRequest } from './schemas.js';

const TAGS = ['Same-Currency Transfers'];

export function transferRoutes(app: Api, { transfers }: Services): void {
  app.post(
    '/transfer-in',
    {
      schema: {
        summary: 'Pull money from an external account into an internal account',
        description:
          'For external accounts with pull (e.g. ACH pull); same owner and same currency on both sides. Returns the INCOMING transaction (201); the account is credited when it completes. In the sandbox the external account number\'s last 3 digits pick the outcome (see the transfers guide).',
        tags: TAGS,
        body: TransferInRequest,
        response: { 201: Transaction, ...errors(403, 404, 409, 422, 501) },
      },
      config: { permission: 'TRANSACT' },
    },
    async (request, reply) => reply.code(201).send(await transfers.transferIn(request.ctx, request.body)),
  );

  app.post(
    '/transfer-out',
    {
      schema: {
        summary: 'Send money from an internal account to an external account',
        description:
          'Same owner and same currency on both sides. The amount is held on the source at once (400 INSUFFICIENT_FUNDS when it is not available), posted when the payment completes and released when it fails. Returns the OUTGOING transaction (201). In the sandbox the external account number\'s last 3 digits pick the outcome (see the transfers guide).',
        tags: TAGS,
        body: TransferOutRequest,
        response: { 201: Transaction, ...errors(403, 404, 409, 422, 501) },
      },
      config: { permission: 'TRANSACT' },
    },
    async (request, reply) => reply.code(201).send(await transfers.transferOut(request.ctx, request.body)),
  );
}
