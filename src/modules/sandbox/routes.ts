import { Type } from 'typebox';
import { errors, IdParam } from '../../http/common-schemas.js';
import type { Api } from '../../http/types.js';
import type { Services } from '../../services.js';
import { InternalAccountView } from '../accounts/schemas.js';

export function sandboxRoutes(app: Api, { sandbox }: Services): void {
  app.post(
    '/sandbox/internal-accounts/:accountId/fund',
    {
      schema: {
        summary: 'Fund an internal account (sandbox)',
        description: 'Credits the account at once, as if a deposit had arrived. Sandbox platforms only (403 elsewhere).',
        tags: ['Sandbox'],
        params: IdParam('accountId', 'Internal account to credit (`InternalAccount:…`).'),
        body: Type.Object(
          { amount: Type.Integer({ minimum: 1, maximum: 9_000_000_000_000_000, description: 'Amount to add, in the smallest unit of the account\'s currency.' }) },
          { additionalProperties: false },
        ),
        response: { 200: InternalAccountView, ...errors(403, 404) },
      },
      config: { permission: 'TRANSACT' },
    },
    async (request) => sandbox.fund(request.ctx, request.params.accountId, request.body.amount),
  );
}
