import { errors, IdParam, NoContent } from '../../http/common-schemas.js';
import { PageOf } from '../../http/pagination.js';
import type { Api } from '../../http/types.js';
import type { Services } from '../../services.js';
import type { Owner } from './repository.js';
import {
  addExternalAccountSchemas,
  CustomerExternalAccountCreate,
  CustomerExternalAccountListQuery,
  ExternalAccountRef,
  PlatformExternalAccountCreate,
  PlatformExternalAccountListQuery,
} from './schemas.js';

const AccountId = IdParam('externalAccountId', 'External account identifier (`ExternalAccount:…`).');
const TAGS = ['External Accounts'];
// Views are built field by field in present(); serializing them through the schema's 42-way
// oneOf would try every branch per account (milliseconds each).
const serializerCompiler = () => (data: unknown) => JSON.stringify(data);

function byIdRoutes(app: Api, { externalAccounts }: Services, owner: Owner, base: string): void {
  const whose = owner === 'customer' ? 'a customer external account' : 'a platform external account';
  app.get(
    `${base}/:externalAccountId`,
    { schema: { summary: `Get ${whose}`, tags: TAGS, params: AccountId, response: { 200: ExternalAccountRef, ...errors(404) } }, serializerCompiler },
    async (request) => externalAccounts.get(request.ctx, owner, request.params.externalAccountId),
  );
  app.delete(
    `${base}/:externalAccountId`,
    {
      schema: {
        summary: `Delete ${whose}`,
        description: 'The account can no longer be paid to, and disappears from lists; registering the same details again is allowed.',
        tags: TAGS,
        params: AccountId,
        response: { 204: NoContent, ...errors(404) },
      },
    },
    async (request, reply) => {
      await externalAccounts.remove(request.ctx, owner, request.params.externalAccountId);
      return reply.code(204).send(null);
    },
  );
}

export function externalAccountRoutes(app: Api, services: Services): void {
  // A scope of its own keeps the shared components local to these routes.
  app.register(async (scope) => {
    addExternalAccountSchemas(scope);
    accountRoutes(scope as unknown as Api, services);
  });
}

function accountRoutes(app: Api, services: Services): void {
  const { externalAccounts } = services;
  app.post(
    '/customers/external-accounts',
    {
      schema: {
        summary: 'Add an external account',
        description:
          'Registers a bank account, mobile-money wallet or crypto address that a customer (or, without `customerId`, the platform) can be paid to. ' +
          'Sandbox platforms verify the beneficiary name by the identifier suffix (see the docs).',
        tags: TAGS,
        body: CustomerExternalAccountCreate,
        response: { 201: ExternalAccountRef, ...errors(404, 409) },
      },
      serializerCompiler,
    },
    async (request, reply) => reply.code(201).send(await externalAccounts.createForCustomer(request.ctx, request.body)),
  );
  app.get(
    '/customers/external-accounts',
    {
      schema: {
        summary: 'List customer external accounts',
        tags: TAGS,
        querystring: CustomerExternalAccountListQuery,
        response: { 200: PageOf(ExternalAccountRef, 'external accounts'), ...errors() },
      },
      serializerCompiler,
    },
    async (request) => externalAccounts.list(request.ctx, 'customer', request.query),
  );
  byIdRoutes(app, services, 'customer', '/customers/external-accounts');

  app.post(
    '/platform/external-accounts',
    {
      schema: {
        summary: 'Add a platform external account',
        description: "Registers an account of the platform itself (for example its own bank account for settlement).",
        tags: TAGS,
        body: PlatformExternalAccountCreate,
        response: { 201: ExternalAccountRef, ...errors(409) },
      },
      serializerCompiler,
    },
    async (request, reply) => reply.code(201).send(await externalAccounts.createForPlatform(request.ctx, request.body)),
  );
  app.get(
    '/platform/external-accounts',
    {
      schema: {
        summary: 'List platform external accounts',
        tags: TAGS,
        querystring: PlatformExternalAccountListQuery,
        response: { 200: PageOf(ExternalAccountRef, 'external accounts'), ...errors() },
      },
      serializerCompiler,
    },
    async (request) => externalAccounts.list(request.ctx, 'platform', request.query),
  );
  byIdRoutes(app, services, 'platform', '/platform/external-accounts');
}
