import { errors, IdParam } from '../../http/common-schemas.js';
import { PageOf } from '../../http/pagination.js';
import type { Api } from '../../http/types.js';
import type { Services } from '../../services.js';
import { CustomerCreate, CustomerListQuery, CustomerUpdate, CustomerView } from './schemas.js';

const CustomerId = IdParam('customerId', 'Customer identifier (`Customer:…`).');

export function customerRoutes(app: Api, { customers }: Services): void {
  app.post(
    '/customers',
    {
      schema: {
        summary: 'Create a customer',
        description:
          'Registers a person or a business and opens its internal accounts, one per currency the platform supports. `platformCustomerId` and `umaAddress` are generated when left out.',
        tags: ['Customers'],
        body: CustomerCreate,
        response: { 201: CustomerView, ...errors(409) },
      },
    },
    async (request, reply) => reply.code(201).send(await customers.create(request.ctx, request.body)),
  );

  app.get(
    '/customers',
    {
      schema: {
        summary: 'List customers',
        description: 'Newest first. Deleted customers are left out unless `isIncludingDeleted` is true.',
        tags: ['Customers'],
        querystring: CustomerListQuery,
        response: { 200: PageOf(CustomerView, 'customers'), ...errors() },
      },
    },
    async (request) => customers.list(request.ctx, request.query),
  );

  app.get(
    '/customers/:customerId',
    {
      schema: {
        summary: 'Get a customer',
        description: 'A deleted customer is still returned, with `isDeleted: true`.',
        tags: ['Customers'],
        params: CustomerId,
        response: { 200: CustomerView, ...errors(404) },
      },
    },
    async (request) => customers.get(request.ctx, request.params.customerId),
  );

  app.patch(
    '/customers/:customerId',
    {
      schema: {
        summary: 'Update a customer',
        description: 'Changes the fields sent; `businessInfo` is merged field by field, `address` and `currencies` are replaced whole.',
        tags: ['Customers'],
        params: CustomerId,
        body: CustomerUpdate,
        response: { 200: CustomerView, ...errors(404, 409, 410) },
      },
    },
    async (request) => customers.update(request.ctx, request.params.customerId, request.body),
  );

  app.delete(
    '/customers/:customerId',
    {
      schema: {
        summary: 'Delete a customer',
        description: 'Marks the customer deleted and returns it. Its identifier and UMA address become free for new customers; its accounts remain.',
        tags: ['Customers'],
        params: CustomerId,
        response: { 200: CustomerView, ...errors(404, 410) },
      },
    },
    async (request) => customers.remove(request.ctx, request.params.customerId),
  );
}
