import { errors } from '../../http/common-schemas.js';
import type { Api } from '../../http/types.js';
import type { Services } from '../../services.js';
import { SigningKeyView, TestWebhookResult } from './schemas.js';

export function webhookRoutes(app: Api, { webhooks }: Services): void {
  app.get(
    '/webhooks/signing-key',
    {
      schema: {
        summary: 'Get the webhook signature public key',
        description:
          'Corridor extension. Every webhook carries `X-Service-Signature`: an ECDSA P-256 / SHA-256 signature over the raw request body, made with a key of this platform. Verify it with the public key returned here (see docs/webhooks.md).',
        tags: ['Webhooks'],
        response: { 200: SigningKeyView, ...errors() },
      },
    },
    async (request) => webhooks.signingKey(request.ctx),
  );

  app.post(
    '/sandbox/webhooks/test',
    {
      schema: {
        summary: 'Send a test webhook',
        description:
          'Posts a signed `TEST` webhook to the configured `webhookEndpoint` right away and reports how the endpoint answered. A non-2xx answer, a timeout or a connection error is a 400 `WEBHOOK_DELIVERY_ERROR` whose details carry the status or the error; no endpoint configured is a 400 `WEBHOOK_ENDPOINT_NOT_SET`. Available on sandbox and production platforms.',
        tags: ['Sandbox'],
        response: { 200: TestWebhookResult, ...errors() },
      },
    },
    async (request) => webhooks.sendTest(request.ctx),
  );
}
