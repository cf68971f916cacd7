// The benchmark scenarios, as data. Each one is run against Corridor and (when the reference spec
// is present) against a Prism mock of it, in this order. See docs/benchmarks.md, "Adding a scenario".
//
// A scenario:
//   key        stable id (used by --only, targets and the JSON results)
//   name       what the table shows
//   issue      the issue that introduced it
//   optional   true: runs only when selected with --only / BENCH_SCENARIOS
//   prism      false: not run against Prism (default true)
//   pairs      true: `requests` is one operation of several dependent requests (autocannon runs
//              them in order on each connection); the table then also shows operations/s
//   setup(ctx) async, Corridor only: create what the scenario needs through the API
//   requests(ctx) → an autocannon `requests` array. Paths go through ctx.path('/things') (adds the
//              target's base path); the runner adds the Authorization header to every request.
//
// ctx: { target: { kind: 'corridor' | 'prism', origin, basePath }, path(p), api, runId,
//        options: { seedCustomers }, once(key, fn) }
//   api.request(method, path, body?, headers?) → { status, body } (path relative to the API base)
//   once(key, fn) runs fn once per target (shared seeding between scenarios)

import { quoteScenarios } from './scenarios/quotes.mjs';
import { signedRetryScenario } from './scenarios/signed-retry.mjs';
import { BENCH_ADDRESS, verifyCustomer } from './scenarios/verification.mjs';

const JSON_BODY = { 'content-type': 'application/json' };

/** A valid individual customer; `suffix` keeps platformCustomerId unique. */
export function customerBody(suffix) {
  return {
    customerType: 'INDIVIDUAL',
    platformCustomerId: `bench-${suffix}`,
    region: 'US',
    fullName: 'Bench Customer',
    birthDate: '1990-01-15',
    nationality: 'US',
  };
}

/** Runs `count` calls of `make(i)` with `concurrency` in flight; fails on the first non-2xx. */
export async function createMany(ctx, count, concurrency, make) {
  let next = 0;
  async function worker() {
    while (next < count) {
      const i = next++;
      const { method, path, body } = make(i);
      const response = await ctx.api.request(method, path, body);
      if (response.status < 200 || response.status >= 300) {
        throw new Error(`seeding ${method} ${path} → HTTP ${response.status}: ${JSON.stringify(response.body).slice(0, 300)}`);
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

/**
 * A customer with a generously funded USD account and a USD bank account whose number ends in 001
 * (a sandbox success), for the transfer scenarios. Prism gets placeholder ids: it only checks shapes.
 */
function transferAccounts(ctx) {
  return ctx.once('transfer-accounts', async () => {
    const customer = await ctx.api.request('POST', '/customers', { ...customerBody(`${ctx.runId}-transfers`), address: BENCH_ADDRESS });
    if (customer.status !== 201) throw new Error(`transfer set-up: POST /customers → HTTP ${customer.status}`);
    await verifyCustomer(ctx, customer.body.id);
    const accounts = await ctx.api.request('GET', `/customers/internal-accounts?customerId=${encodeURIComponent(customer.body.id)}&currency=USD`);
    const source = accounts.body?.data?.[0]?.id;
    if (!source) throw new Error('transfer set-up: the customer has no USD internal account');
    const funded = await ctx.api.request('POST', `/sandbox/internal-accounts/${encodeURIComponent(source)}/fund`, { amount: 1_000_000_000_000 });
    if (funded.status !== 200) throw new Error(`transfer set-up: funding → HTTP ${funded.status}: ${JSON.stringify(funded.body).slice(0, 300)}`);
    const external = await ctx.api.request('POST', '/customers/external-accounts', {
      customerId: customer.body.id,
      currency: 'USD',
      accountInfo: {
        accountType: 'USD_ACCOUNT',
        accountNumber: '4455667001',
        routingNumber: '021000021',
        beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Bench Customer', birthDate: '1990-01-15', nationality: 'US' },
      },
    });
    if (external.status !== 201) throw new Error(`transfer set-up: external account → HTTP ${external.status}: ${JSON.stringify(external.body).slice(0, 300)}`);
    ctx.transferAccounts = { source, destination: external.body.id };
  });
}

function seedCustomers(ctx) {
  return ctx.once('customers', () =>
    createMany(ctx, ctx.options.seedCustomers, 16, (i) => ({ method: 'POST', path: '/customers', body: customerBody(`${ctx.runId}-seed-${i}`) })),
  );
}

export const SCENARIOS = [
  {
    key: 'customers.list',
    name: 'GET /customers?limit=20',
    issue: 2,
    // Runs before POST /customers so the list is over the seeded customers only.
    setup: seedCustomers,
    requests: (ctx) => [{ method: 'GET', path: ctx.path('/customers?limit=20') }],
  },
  {
    // The same page size, but each request asks for another page (rotating over every cursor of
    // the seeded list), so concurrent requests rarely match and each pays for its own query:
    // what a list costs when read coalescing (src/http/coalescing.ts) has nothing to share.
    key: 'customers.pages',
    name: 'GET /customers?limit=20&cursor=… (a different page each)',
    issue: 2,
    prism: false,
    setup: (ctx) =>
      ctx.once('customer-cursors', async () => {
        await seedCustomers(ctx);
        const cursors = [];
        for (let cursor; ; ) {
          const page = await ctx.api.request('GET', `/customers?limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
          if (!page.body?.hasMore) break;
          cursors.push((cursor = page.body.nextCursor));
        }
        ctx.customerCursors = cursors;
      }),
    requests: (ctx) => {
      const paths = (ctx.customerCursors ?? []).map((cursor) => ctx.path(`/customers?limit=20&cursor=${encodeURIComponent(cursor)}`));
      let n = 0;
      return [{ method: 'GET', path: ctx.path('/customers?limit=20'), setupRequest: (req) => (paths.length ? { ...req, path: paths[n++ % paths.length] } : req) }];
    },
  },
  {
    key: 'customers.create',
    name: 'POST /customers',
    issue: 2,
    requests: (ctx) => {
      let n = 0;
      return [
        {
          method: 'POST',
          path: ctx.path('/customers'),
          headers: JSON_BODY,
          setupRequest: (req) => ({ ...req, body: JSON.stringify(customerBody(`${ctx.runId}-${n++}`)) }),
        },
      ];
    },
  },
  {
    key: 'rates.list',
    name: 'GET /exchange-rates',
    issue: 2,
    requests: (ctx) => [{ method: 'GET', path: ctx.path('/exchange-rates') }],
  },
  {
    // No database work at all when auth and platform are cached: the HTTP + auth floor.
    key: 'config.get',
    name: 'GET /config',
    issue: 2,
    requests: (ctx) => [{ method: 'GET', path: ctx.path('/config') }],
  },
  {
    // One keyset-page query per request: the floor of any list endpoint.
    key: 'tokens.list',
    name: 'GET /tokens?limit=20',
    issue: 2,
    setup: (ctx) =>
      ctx.once('tokens', () =>
        createMany(ctx, 24, 8, (i) => ({ method: 'POST', path: '/tokens', body: { name: `bench token ${i}`, permissions: ['VIEW'] } })),
      ),
    requests: (ctx) => [{ method: 'GET', path: ctx.path('/tokens?limit=20') }],
  },
  {
    // The money-movement hot path: hold on one balance, the rail call, PROCESSING; the sandbox
    // rail completes each transfer a second later in the background job runner.
    key: 'transfers.out',
    name: 'POST /transfer-out',
    issue: 3,
    setup: transferAccounts,
    requests: (ctx) => {
      const { source, destination } = ctx.transferAccounts ?? { source: 'InternalAccount:bench', destination: 'ExternalAccount:bench' };
      return [
        {
          method: 'POST',
          path: ctx.path('/transfer-out'),
          headers: JSON_BODY,
          body: JSON.stringify({ source: { accountId: source }, destination: { accountId: destination }, amount: 100 }),
        },
      ];
    },
  },
  // Quotes: POST /quotes, and quote + execute pairs (see scenarios/quotes.mjs).
  ...quoteScenarios,
  {
    // After the money scenarios, so the page is over the thousands of transactions they made
    // (run alone, its set-up makes 200 transfers first).
    key: 'transactions.list',
    name: 'GET /transactions?limit=20',
    issue: 3,
    setup: (ctx) =>
      ctx.once('transactions', async () => {
        await transferAccounts(ctx);
        const { source, destination } = ctx.transferAccounts;
        const body = { source: { accountId: source }, destination: { accountId: destination }, amount: 100 };
        await createMany(ctx, 200, 8, () => ({ method: 'POST', path: '/transfer-out', body }));
      }),
    requests: (ctx) => [{ method: 'GET', path: ctx.path('/transactions?limit=20') }],
  },
  {
    key: 'customers.create.idempotent',
    name: 'POST /customers + Idempotency-Key',
    issue: 2,
    optional: true,
    requests: (ctx) => {
      let n = 0;
      return [
        {
          method: 'POST',
          path: ctx.path('/customers'),
          setupRequest: (req) => {
            const suffix = `${ctx.runId}-idem-${n++}`;
            return { ...req, headers: { ...req.headers, ...JSON_BODY, 'idempotency-key': suffix }, body: JSON.stringify(customerBody(suffix)) };
          },
        },
      ];
    },
  },
  {
    // An example of "pairs": the second request uses the first one's response.
    key: 'tokens.create-delete',
    name: 'POST /tokens → DELETE /tokens/{id}',
    issue: 2,
    optional: true,
    pairs: true,
    requests: (ctx) => [
      {
        method: 'POST',
        path: ctx.path('/tokens'),
        headers: JSON_BODY,
        body: JSON.stringify({ name: 'bench pair', permissions: ['VIEW'] }),
        onResponse: (status, body, context) => {
          context.tokenId = status === 201 ? JSON.parse(body).id : undefined;
        },
      },
      {
        method: 'DELETE',
        path: ctx.path('/tokens/placeholder'),
        // Returning null skips this request and starts the next pair.
        setupRequest: (req, context) => (context.tokenId ? { ...req, path: ctx.path(`/tokens/${encodeURIComponent(context.tokenId)}`) } : null),
      },
    ],
  },
  // Embedded wallets: one signed-retry verification per operation (see scenarios/signed-retry.mjs).
  signedRetryScenario({ connections: Math.round(Number(process.env.BENCH_CONNECTIONS) || 50) }),
];
