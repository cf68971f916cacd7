import { errors } from '../../http/common-schemas.js';
import type { Api } from '../../http/types.js';
import type { Services } from '../../services.js';
import { WithdrawalFeeEstimate, WithdrawalFeeRequest } from './schemas.js';

export function cryptoRoutes(app: Api, { crypto }: Services): void {
  app.post(
    '/crypto/estimate-withdrawal-fee',
    {
      schema: {
        summary: 'Estimate a crypto withdrawal fee',
        description: 'Network and application fees of withdrawing an asset from a crypto internal account to an address, and what the recipient would receive. Nothing is reserved.',
        tags: ['Cross-Currency Transfers'],
        body: WithdrawalFeeRequest,
        response: { 200: WithdrawalFeeEstimate, ...errors(404) },
      },
      config: { permission: 'VIEW' },
    },
    async (request) => crypto.estimateWithdrawalFee(request.ctx, request.body),
  );
}
