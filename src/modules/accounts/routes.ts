import { errors } from '../../http/common-schemas.js';
import { PageOf } from '../../http/pagination.js';
import type { Api } from '../../http/types.js';
import type { Services } from '../../services.js';
import { CustomerAccountListQuery, InternalAccountView, PlatformAccountListQuery } from './schemas.js';

export function accountRoutes(app: Api, { accounts }: Services): void {
  app.get(
    '/customers/internal-accounts',
    {
      schema: {
        summary: 'List customers\' internal accounts',
        description: 'Every customer gets one account per currency the platform supports when it is created, and one more whenever the platform adds a currency.',
        tags: ['Internal Accounts'],
        querystring: CustomerAccountListQuery,
        response: { 200: PageOf(InternalAccountView, 'internal accounts'), ...errors() },
      },
    },
    async (request) => accounts.listCustomerAccounts(request.ctx, request.query),
  );

  app.get(
    '/platform/internal-accounts',
    {
      schema: {
        summary: 'List the platform\'s internal accounts',
        description: 'The platform\'s own accounts, one per supported currency. One page (up to 100) holds them all unless `limit` is lowered.',
        tags: ['Internal Accounts'],
        querystring: PlatformAccountListQuery,
        response: { 200: PageOf(InternalAccountView, 'internal accounts'), ...errors() },
      },
    },
    async (request) => accounts.listPlatformAccounts(request.ctx, request.query),
  );
}
