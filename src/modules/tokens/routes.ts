import { heldBy } from '../../http/auth.js';
import { errors, IdParam, NoContent } from '../../http/common-schemas.js';
import { PageOf } from '../../http/pagination.js';
import type { Api } from '../../http/types.js';
import { ApiToken, ApiTokenCreate, TokenListQuery, type ApiTokenView } from './schemas.js';
import type { TokenService } from './service.js';

const TokenId = IdParam('tokenId', 'Token identifier (`Token:…`).');

export function tokenRoutes(app: Api, tokens: TokenService): void {
  app.post(
    '/tokens',
    {
      schema: {
        summary: 'Create an API token',
        description:
          'The response carries `clientSecret`, shown this once; only its hash is stored. A replay under the same Idempotency-Key answers the token without it. A token grants at most what the calling token holds (403 PERMISSION_DENIED otherwise).',
        tags: ['API Tokens'],
        body: ApiTokenCreate,
        response: { 201: ApiToken, ...errors(403) },
      },
      config: { oneTimeSecret: { kept: ({ clientSecret: _secret, ...token }: ApiTokenView) => token } },
    },
    async (request, reply) => reply.code(201).send(await tokens.create(request.ctx, request.body, heldBy(request))),
  );

  app.get(
    '/tokens',
    {
      schema: {
        summary: 'List API tokens',
        tags: ['API Tokens'],
        querystring: TokenListQuery,
        response: { 200: PageOf(ApiToken, 'tokens'), ...errors() },
      },
    },
    async (request) => tokens.list(request.ctx, request.query),
  );

  app.get(
    '/tokens/:tokenId',
    {
      schema: {
        summary: 'Get an API token',
        tags: ['API Tokens'],
        params: TokenId,
        response: { 200: ApiToken, ...errors(404) },
      },
    },
    async (request) => tokens.get(request.ctx, request.params.tokenId),
  );

  app.delete(
    '/tokens/:tokenId',
    {
      schema: {
        summary: 'Delete an API token',
        description: 'Requests made with the token fail from now on.',
        tags: ['API Tokens'],
        params: TokenId,
        response: { 204: NoContent, ...errors(404) },
      },
    },
    async (request, reply) => {
      await tokens.remove(request.ctx, request.params.tokenId);
      return reply.code(204).send(null);
    },
  );
}
