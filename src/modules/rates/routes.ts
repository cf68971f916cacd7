import { errors } from '../../http/common-schemas.js';
import type { Api } from '../../http/types.js';
import type { Services } from '../../services.js';
import { ExchangeRateList, ExchangeRateQuery } from './schemas.js';

export function rateRoutes(app: Api, services: Services): void {
  app.get(
    '/exchange-rates',
    {
      schema: {
        summary: 'List exchange rates',
        description:
          'Rates between the currencies this platform supports, with what a given amount delivers under the platform\'s fees. ' +
          'Rates are refreshed from the rate source at most every five minutes. `exchangeRate` is receiving units per sending unit.',
        tags: ['Exchange Rates'],
        querystring: ExchangeRateQuery,
        response: { 200: ExchangeRateList, ...errors(503) },
      },
    },
    async (request) => services.rates.listExchangeRates(request.platform, request.query),
  );
}
