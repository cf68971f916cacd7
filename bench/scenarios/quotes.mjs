// Quote scenarios (money-movement issue): POST /quotes, and POST /quotes → POST /quotes/{id}/execute
// from funded EUR internal accounts to a USD bank account whose sandbox outcome is success
// (suffix 001): each pair creates a quote and its transaction, holds three ledger legs and starts
// the payout; the job runner completes it a second later (posting the legs) in the background.
// Targets (quoteTargets) are checked by bench/targets.mjs.

import { BENCH_ADDRESS, verifyCustomer } from './verification.mjs';

const JSON_BODY = { 'content-type': 'application/json' };
const ISSUE = 3;
const fmt = (n) => Math.round(n).toLocaleString('en-US');

/**
 * Paying customers: each pays from its own EUR account, and requests rotate over them, so the
 * run measures many payers (as the DB ceiling spreads its transfers over many accounts) rather
 * than one hot balance row. BENCH_QUOTE_SOURCES=1 measures a single payer.
 */
const SOURCES = Math.max(1, Number(process.env.BENCH_QUOTE_SOURCES) || 64);

async function payer(ctx, i) {
  const fail = (what, res) => {
    throw new Error(`quote set-up: ${what} → HTTP ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
  };
  const customer = await ctx.api.request('POST', '/customers', {
    customerType: 'INDIVIDUAL',
    platformCustomerId: `bench-${ctx.runId}-quoter-${i}`,
    region: 'US',
    fullName: 'Bench Quoter',
    birthDate: '1990-01-15',
    nationality: 'US',
    address: BENCH_ADDRESS,
  });
  if (customer.status !== 201) fail('POST /customers', customer);
  await verifyCustomer(ctx, customer.body.id);
  const accounts = await ctx.api.request('GET', `/customers/internal-accounts?customerId=${encodeURIComponent(customer.body.id)}&currency=EUR`);
  const source = accounts.body?.data?.find((a) => a.type !== 'EMBEDDED_WALLET')?.id;
  if (!source) throw new Error('quote set-up: the customer has no EUR internal account');
  const funded = await ctx.api.request('POST', `/sandbox/internal-accounts/${encodeURIComponent(source)}/fund`, { amount: 1_000_000_000_000_000 });
  if (funded.status !== 200) fail('funding', funded);
  return { customerId: customer.body.id, source };
}

/** The paying accounts and one USD payout account (sandbox outcome: success), made once per run. */
function quoteAccounts(ctx) {
  return ctx.once('quote-accounts', async () => {
    const payers = [];
    for (let i = 0; i < SOURCES; i += 8) {
      payers.push(...(await Promise.all(Array.from({ length: Math.min(8, SOURCES - i) }, (_, j) => payer(ctx, i + j)))));
    }
    const external = await ctx.api.request('POST', '/customers/external-accounts', {
      customerId: payers[0].customerId,
      currency: 'USD',
      accountInfo: {
        accountType: 'USD_ACCOUNT',
        accountNumber: '7788990001',
        routingNumber: '021000021',
        beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Bench Payee', birthDate: '1985-06-30', nationality: 'US' },
      },
    });
    if (external.status !== 201) throw new Error(`quote set-up: external account → HTTP ${external.status}: ${JSON.stringify(external.body).slice(0, 300)}`);
    ctx.quoteAccounts = { sources: payers.map((p) => p.source), destination: external.body.id };
  });
}

/** Quote bodies, rotating over the paying accounts. */
function quoteBodies(ctx) {
  const { sources, destination } = ctx.quoteAccounts ?? { sources: ['InternalAccount:bench'], destination: 'ExternalAccount:bench' };
  const bodies = sources.map((accountId) =>
    JSON.stringify({
      source: { sourceType: 'ACCOUNT', accountId },
      destination: { destinationType: 'ACCOUNT', accountId: destination },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 10_000,
    }),
  );
  let n = 0;
  return () => bodies[n++ % bodies.length];
}

export const quoteScenarios = [
  {
    // Prices a EUR → USD payout and writes the quote, its transaction, its event and its expiry job.
    key: 'quotes.create',
    name: 'POST /quotes',
    issue: ISSUE,
    setup: quoteAccounts,
    requests: (ctx) => {
      const next = quoteBodies(ctx);
      return [{ method: 'POST', path: ctx.path('/quotes'), headers: JSON_BODY, setupRequest: (req) => ({ ...req, body: next() }) }];
    },
  },
  {
    key: 'quotes.execute',
    name: 'POST /quotes → POST /quotes/{id}/execute',
    issue: ISSUE,
    pairs: true,
    setup: quoteAccounts,
    requests: (ctx) => {
      const next = quoteBodies(ctx);
      return [
        {
          method: 'POST',
          path: ctx.path('/quotes'),
          headers: JSON_BODY,
          setupRequest: (req) => ({ ...req, body: next() }),
          onResponse: (status, body, context) => {
            context.quoteId = status === 201 ? JSON.parse(body).id : undefined;
          },
        },
        {
          method: 'POST',
          path: ctx.path('/quotes/placeholder/execute'),
          setupRequest: (req, context) => (context.quoteId ? { ...req, path: ctx.path(`/quotes/${encodeURIComponent(context.quoteId)}/execute`) } : null),
        },
      ];
    },
  },
];

function usable(result) {
  if (!result) return { status: 'SKIP', detail: 'scenario not run' };
  if (result.skipped) return { status: 'SKIP', detail: result.skipped };
  if (result.failed) return { status: 'FAIL', detail: result.failed };
  if (result.errors > 0) return { status: 'FAIL', detail: `${fmt(result.errors)} failed requests during the run` };
  return undefined;
}

export const quoteTargets = [
  {
    issue: ISSUE,
    scenario: 'quotes.execute',
    label: 'quote+execute pairs/s ≥ 40% of the DB transfer-transaction ceiling',
    check({ scenario, ceilings }) {
      const ceiling = ceilings['db-transfer-transaction'];
      if (!ceiling || ceiling.skipped || ceiling.failed) return { status: 'SKIP', detail: 'db-transfer-transaction ceiling not measured' };
      const share = scenario.opsPerSecond / ceiling.rps;
      return { status: share >= 0.4 ? 'PASS' : 'FAIL', detail: `${fmt(scenario.opsPerSecond)} pairs/s = ${(share * 100).toFixed(1)}% of ${fmt(ceiling.rps)} tx/s` };
    },
  },
  {
    issue: ISSUE,
    scenario: 'quotes.execute',
    label: 'quote+execute p99 < 50 ms at 50 connections',
    check({ scenario, run }) {
      const note = run.connections === 50 ? '' : ` (this run used ${run.connections} connections)`;
      return { status: scenario.latency.p99 < 50 ? 'PASS' : 'FAIL', detail: `p99 ${scenario.latency.p99} ms per request${note}` };
    },
  },
  {
    issue: ISSUE,
    scenario: 'quotes.create',
    label: 'POST /quotes p99 < 50 ms at 50 connections',
    check({ scenario, run }) {
      const note = run.connections === 50 ? '' : ` (this run used ${run.connections} connections)`;
      return { status: scenario.latency.p99 < 50 ? 'PASS' : 'FAIL', detail: `p99 ${scenario.latency.p99} ms${note}` };
    },
  },
  {
    issue: ISSUE,
    scenario: 'quotes.create',
    label: 'POST /quotes ≥ 10× Prism',
    check({ scenario, prism }) {
      const skip = usable(prism);
      if (skip) return { status: 'SKIP', detail: `Prism: ${skip.detail}` };
      const ratio = scenario.rps / prism.rps;
      return { status: ratio >= 10 ? 'PASS' : 'FAIL', detail: `${ratio.toFixed(1)}× (Prism ${fmt(prism.rps)} req/s)` };
    },
  },
];
