import { errors } from '../../http/common-schemas.js';
import type { Api } from '../../http/types.js';
import type { Services } from '../../services.js';
import { DiscoveryList, DiscoveryQuery } from './schemas.js';

export function discoveryRoutes(app: Api, { discovery }: Services): void {
  app.get(
    '/discoveries',
    {
      schema: {
        summary: 'List receiving institutions',
        description:
          'Banks, wallets and payment rails Corridor can pay out to, optionally narrowed by country and currency. ' +
          'A well-formed code that Corridor does not serve gives an empty list.',
        tags: ['Discoveries'],
        querystring: DiscoveryQuery,
        response: { 200: DiscoveryList, ...errors() },
      },
    },
    async (request) => discovery.list(request.query),
  );
}
