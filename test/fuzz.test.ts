// Robustness: no input a client can send makes Corridor answer 5xx or an error outside the envelope.
//
// Driven by the app's own OpenAPI document, like test/isolation.test.ts (and on its platform A,
// built by test/support/isolation-world.ts, for real ids in path parameters and valid bodies): every
// operation with a request body or query parameters gets a deterministic set of bad and edge
// inputs derived from its schemas, from a seeded PRNG (FUZZ_SEED=n replays another set):
//   - bodies: `[]`, `null`, `"x"`, `{}`, numbers, deeply nested JSON, and a valid body (the isolation
//     fixtures', else one built from the schema's required fields) with ONE thing changed at a time:
//     a field given each other JSON type, empty / 10k-character / emoji / NUL / control-character
//     strings, 0, -1, 1.5, ±1e308, 2^53, 2^63, 9000000000000001, numbers as strings, enum values in
//     the wrong case, malformed and extreme date-times, a required field left out (nested too), a
//     discriminated oneOf given each discriminator value with the other branch's fields;
//   - query strings: each parameter given junk (negative and huge limits, `%00`, broken percent
//     escapes, base64 garbage and well-formed cursors holding nonsense, 10k characters, bad dates),
//     repeated, and start dates after end dates;
//   - multipart forms (documents, bulk CSV): each text field given the same junk, the file left out.
// Every answer must be below 500 and, from 400 up, the error envelope {status, code, message}. A 2xx
// is a failure only where the input breaks the operation's own schema (checked with an independent
// Ajv): what the schema allows, the server may accept. A last test pays extreme but valid amounts
// (funding up to the limit twice, quotes of the maximum between JPY and BHD, a transfer-out of it).
//
// Every failure is collected and reported at once. FUZZ_LOG=1 prints every request and answer;
// FUZZ_SEED picks the set of inputs (the failure report names the seed it ran with).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_PREFIX } from '../src/http/app.js';
import { agentPolicy, connectedAgent, type TestAgent } from './support/agents.js';
import { basicAuth, type TestApp, type TestPlatform } from './support/app.js';
import { PATH_OP_BODIES, PATH_OP_QUERIES, pathIds, queryValues, REFERENCE_PROBES } from './support/isolation-routes.js';
import { extAccountBody, ok, quoteBody, realtimeQuoteBody, SANDBOX_RECEIVER, umaReceiveBody, type WorldA, type WorldB, startWorlds } from './support/isolation-world.js';
import { newCustomer, usdAccount } from './support/quotes.js';
import { multipart, PDF } from './support/verification.js';
import { HEADER_JUNK, mulberry32, seedOf, shuffled, SEED } from './support/fuzz-values.js';
import { encodeQuery, inputsFrom, operations, pathInputs, type Input, type Operation } from './support/fuzz-inputs.js';
import { problemWith, schemaJudge, type Answer } from './support/fuzz-judge.js';
import { getAt, schemaWalker, withValue, type SchemaWalker } from './support/fuzz-schemas.js';
import type { WebhookReceiver } from './support/webhook-receiver.js';

/** Inputs per operation: those the operation's schema accepts (they reach the service) and those it refuses. */
const MAX_VALID = 400;
const MAX_INVALID = 120;

let t: TestApp;
let receiver: WebhookReceiver;
let doc: any;
let schemas: SchemaWalker;
let inputs: ReturnType<typeof inputsFrom>;
let judge: ReturnType<typeof schemaJudge>;
let A: WorldA;
let B: WorldB;
let agent: TestAgent;
/** A customer of A's other than the inviter, to claim A's invitation. */
let inviteeUma: string;
/** A fresh platform for the operations that change what every other operation runs against (settings, clock). */
let C: TestPlatform;
/** An agent of A's whose actions wait for approval, for the operations on a pending action. */
let approvalAgent: TestAgent;
/** A device code of an agent of A's that nobody redeemed. */
let deviceCode: string;

// ---------------------------------------------------------------------------------------------
// Fixtures: the path, valid body and valid query of each operation fuzzed

/** The filled-in path of each fuzzed operation with path parameters (A's own objects). */
const PATHS: Record<string, (a: WorldA) => string> = {
  'PATCH /customers/{customerId}': (a) => `/customers/${a.customer}`,
  'POST /auth/credentials/{id}/challenge': (a) => `/auth/credentials/${a.credential}/challenge`,
  'POST /auth/credentials/{id}/verify': (a) => `/auth/credentials/${a.credential}/verify`,
  'POST /internal-accounts/{id}/export': (a) => `/internal-accounts/${a.walletAccount}/export`,
  'POST /transactions/{transactionId}/approve': (a) => `/transactions/${a.txPending}/approve`,
  'POST /transactions/{transactionId}/reject': (a) => `/transactions/${a.txPending}/reject`,
  'POST /sandbox/internal-accounts/{accountId}/fund': (a) => `/sandbox/internal-accounts/${a.usd}/fund`,
  'POST /invitations/{invitationCode}/claim': (a) => `/invitations/${a.invitation}/claim`,
  'PATCH /beneficial-owners/{beneficialOwnerId}': (a) => `/beneficial-owners/${a.owner}`,
  'PATCH /agents/{agentId}': (a) => `/agents/${a.agent}`,
  'PATCH /agents/{agentId}/policy': (a) => `/agents/${a.agent}/policy`,
  'POST /agents/{agentId}/actions/{actionId}/reject': (a) => `/agents/${a.agent}/actions/${a.action}/reject`,
  'PUT /documents/{documentId}': (a) => `/documents/${a.document}`,
  'GET /receiver/external-account/{accountId}': (a) => `/receiver/external-account/${a.ext}`,
  'GET /receiver/uma/{receiverUmaAddress}': () => `/receiver/uma/${encodeURIComponent(SANDBOX_RECEIVER)}`,
  // Unauthenticated: the code is the capability (a fresh agent's, unredeemed).
  'GET /agents/device-codes/{code}/status': () => `/agents/device-codes/${deviceCode}/status`,
  'POST /agents/device-codes/{code}/redeem': () => `/agents/device-codes/${deviceCode}/redeem`,
};

/** Valid bodies beyond the isolation fixtures' (PATH_OP_BODIES, and REFERENCE_PROBES' own requests). */
const BODIES: Record<string, (a: WorldA) => unknown> = {
  'PATCH /config': () => ({
    webhookEndpoint: 'https://example.com/hook',
    supportedCurrencies: ['USD', 'EUR'].map((currencyCode) => ({ currencyCode, minAmount: 1, maxAmount: 1_000_000_000, requiredCounterpartyFields: [{ name: 'FULL_NAME', mandatory: true }], enabledTransactionTypes: ['OUTGOING', 'INCOMING'] })),
    fees: { variableFeeRate: 0.003, fixedFees: [{ currencyCode: 'USD', amount: 50 }], fxSpreadBps: 25 },
    embeddedWallets: { currencies: ['USD'], oidcIssuers: [{ issuer: 'https://accounts.example.com', audiences: ['fuzz-client'] }] },
  }),
  'POST /sandbox/clock/advance': () => ({ seconds: 60 }),
  'POST /tokens': () => ({ name: 'fuzz token', permissions: ['VIEW'] }),
  'POST /platform/external-accounts': () => ({ currency: 'USD', accountInfo: { accountType: 'USD_ACCOUNT', accountNumber: '987654002', routingNumber: '021000021', beneficiary: { beneficiaryType: 'BUSINESS', legalName: 'Fuzz Treasury' } } }),
  'POST /transactions/{transactionId}/approve': () => ({}),
  'POST /auth/credentials/{id}/challenge': () => ({}),
  'POST /agents/me/quotes': (a) => quoteBody(a.usd, a.ext),
  'POST /agents/me/transfer-out': (a) => ({ source: { accountId: a.usd }, destination: { accountId: a.ext }, amount: 100 }),
  'POST /agents/me/transfer-in': (a) => ({ source: { accountId: a.ext }, destination: { accountId: a.usd }, amount: 100 }),
  'POST /agents/me/external-accounts': (a) => {
    const { customerId: _, ...body } = extAccountBody(a.customer);
    return body;
  },
  'POST /documents': (a) => ({ documentHolder: a.customer, documentType: 'PASSPORT', country: 'US' }),
  'PUT /documents/{documentId}': () => ({ documentType: 'DRIVERS_LICENSE', country: 'US' }),
  'POST /invitations/{invitationCode}/claim': () => ({ inviteeUma }),
  'POST /beneficial-owners': (a) => ({ ...(REFERENCE_PROBES['POST /beneficial-owners']![0]!.a(a, B).body as object), ownershipPercentage: 1 }),
  'POST /customers/bulk/csv': () => ({}),
};

/** Operations run on the fresh platform C: they change what the other operations run against. */
const ON_C = new Set(['PATCH /config', 'POST /sandbox/clock/advance']);

/**
 * Operations whose valid request is used up by the first that succeeds (a quote paid, a payment
 * approved): each input gets a fresh object, in place of the valid request's.
 */
const PREPARE: Record<string, (path: string, body: any) => Promise<{ path: string; body: any }>> = {
  'POST /sandbox/send': async (path, body) => {
    const quote = ok(await A.tp.api.post('/quotes', realtimeQuoteBody(A.customer, A.ext)), 201, 'realtime quote');
    return { path, body: replaceString(body, A.realtimeQuote, quote.id) };
  },
  'POST /transactions/{transactionId}/approve': async (path, body) => ({ path: path.replace(A.txPending, await pendingPayment()), body }),
  'POST /transactions/{transactionId}/reject': async (path, body) => ({ path: path.replace(A.txPending, await pendingPayment()), body }),
  'POST /agents/{agentId}/actions/{actionId}/reject': async (path, body) => {
    const action = ok(await approvalAgent.api.post('/agents/me/transfer-out', { source: { accountId: A.usd }, destination: { accountId: A.ext }, amount: 100 }), 201, 'agent action');
    return { path: `/agents/${approvalAgent.id}/actions/${action.id}/reject`, body };
  },
};

async function pendingPayment(): Promise<string> {
  const payment = ok(await A.tp.api.post('/sandbox/uma/receive', umaReceiveBody({ customerId: A.customer })), 200, 'incoming payment');
  return payment.id;
}

function replaceString(value: unknown, from: string, to: string): unknown {
  if (value === from) return to;
  if (Array.isArray(value)) return value.map((v) => replaceString(v, from, to));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaceString(v, from, to)]));
  return value;
}

/** Query values beyond the isolation fixtures' (a required parameter that must name a certain kind of object). */
const QUERIES: Record<string, (a: WorldA) => Record<string, string>> = {
  'GET /beneficial-owners': (a) => ({ customerId: a.business }),
};

/**
 * Values that must differ from one request to the next for the valid body to stay valid (a new
 * customer's platformCustomerId, a new bank account's number): replaced in each input that still
 * holds the valid body's value.
 */
const FRESH: Record<string, Array<{ path: string[]; value: (n: number) => string }>> = {
  'POST /customers': [{ path: ['platformCustomerId'], value: (n) => `fuzz-${n}` }],
  'POST /customers/external-accounts': [{ path: ['accountInfo', 'accountNumber'], value: (n) => `${7_000_000 + n}001` }],
  'POST /agents/me/external-accounts': [{ path: ['accountInfo', 'accountNumber'], value: (n) => `${8_000_000 + n}001` }],
  'POST /platform/external-accounts': [{ path: ['accountInfo', 'accountNumber'], value: (n) => `${9_000_000 + n}001` }],
};

let freshCounter = 0;
function freshen(op: Operation, valid: unknown, body: unknown): unknown {
  let out = body;
  for (const { path, value } of FRESH[op.key] ?? []) {
    if (getAt(out, path) !== undefined && getAt(out, path) === getAt(valid, path)) out = withValue(out, path, value(++freshCounter));
  }
  return out;
}

function validBody(op: Operation): unknown {
  const fixture = BODIES[op.key] ?? PATH_OP_BODIES[op.key];
  if (fixture) {
    const body = fixture(A) as any;
    return body?.multipart ?? body;
  }
  const probe = REFERENCE_PROBES[op.key]?.[0];
  if (probe && !op.pathParams.length) {
    const spec = probe.a(A, B);
    if (spec.body !== undefined) return (spec.body as any).multipart ?? spec.body;
  }
  return schemas.sample(op.body);
}

function validQuery(op: Operation): Record<string, string> {
  const values = queryValues(A);
  const query: Record<string, string> = { ...PATH_OP_QUERIES[op.key]?.({ customer: A.customer }), ...QUERIES[op.key]?.(A) };
  for (const q of op.query) if (q.required && query[q.name] === undefined) query[q.name] = values[q.name]?.[0] ?? String(schemas.sample(q.schema));
  return query;
}

// ---------------------------------------------------------------------------------------------
// Sending

function headersFor(op: Operation): Record<string, string> {
  if (op.auth === 'agent') return { authorization: `Bearer ${agent.accessToken}` };
  if (op.auth === 'none') return {};
  return { authorization: basicAuth((ON_C.has(op.key) ? C : A.tp).credentials) };
}

async function send(op: Operation, basePath: string, input: Input): Promise<Answer> {
  const headers = { ...headersFor(op), ...input.headers };
  let path = input.path ?? basePath;
  let body = input.body;
  if (PREPARE[op.key] && input.valid !== false && !input.path) ({ path, body } = await PREPARE[op.key]!(path, body));
  let payload: string | Buffer | undefined;
  if (input.form) {
    const fields = Object.fromEntries(Object.entries(input.form.fields).filter(([, v]) => v !== undefined)) as Record<string, string>;
    const csv = input.form.csv ?? (op.key === 'POST /customers/bulk/csv' ? `platformCustomerId,customerType,fullName\nfz-bulk-${++freshCounter},INDIVIDUAL,Bulk` : undefined);
    const files = input.form.file ? [csv !== undefined ? { fileName: 'customers.csv', contentType: 'text/csv', content: Buffer.from(csv) } : { fileName: 'doc.pdf', contentType: 'application/pdf', content: PDF }] : [];
    const built = multipart(fields, files);
    payload = built.payload;
    headers['content-type'] = built.contentType;
  } else if (body !== undefined) {
    payload = JSON.stringify(input.valid !== false ? freshen(op, input.validBody, body) : body);
    headers['content-type'] = 'application/json';
  }
  const url = `${API_PREFIX}${path}${input.query ? `?${input.query}` : ''}`;
  const response = await t.corridor.app.inject({ method: op.method as any, url, headers, payload });
  let parsed: any;
  try {
    parsed = JSON.parse(response.body);
  } catch {
    parsed = undefined;
  }
  return { status: response.statusCode, body: parsed, text: response.body };
}

function describe_(op: Operation, path: string, input: Input, answer: Answer): string {
  const sent = input.form ? ` form ${JSON.stringify(input.form.fields).slice(0, 150)}` : input.body !== undefined ? ` ${JSON.stringify(input.body).slice(0, 200)}` : '';
  return `${op.method} ${input.path ?? path}${input.query ? `?${input.query.slice(0, 150)}` : ''}${sent} [${input.label}] → ${answer.status} ${answer.text.slice(0, 300)}`;
}

// ---------------------------------------------------------------------------------------------
// Setup

beforeAll(async () => {
  ({ t, receiver, doc, A, B } = await startWorlds());
  schemas = schemaWalker(doc);
  inputs = inputsFrom(schemas);
  judge = schemaJudge(doc);
  agent = await connectedAgent(t, A.tp, A.customer, agentPolicy(), 'Fuzz agent');
  approvalAgent = await connectedAgent(t, A.tp, A.customer, agentPolicy({ defaultExecutionMode: 'APPROVAL_REQUIRED' }), 'Fuzz approval agent');
  C = await t.createPlatform({ name: 'Fuzz platform C' });
  deviceCode = ok(await A.tp.api.post('/agents', { name: 'Unredeemed agent', customerId: A.customer, policy: agentPolicy() }), 201, 'agent').deviceCode.code;
  const invitee = await newCustomer(A.tp, 'Ivy Invitee');
  inviteeUma = ok(await A.tp.api.get(`/customers/${invitee.id}`), 200, 'invitee').umaAddress;
});

afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

/** Operations that change what the others run against go last (the platform's settings, its clock). */
function order(op: Operation): number {
  return op.key === 'PATCH /config' ? 2 : op.key === 'POST /sandbox/clock/advance' ? 1 : 0;
}

function fuzzed(ops: Operation[]): Operation[] {
  // Agent operations with a body or query; the others (platform, and the unauthenticated device-code routes) with path parameters too.
  return ops.filter((op) => op.body || op.query.length > 0 || (op.pathParams.length > 0 && op.auth !== 'agent')).sort((x, y) => order(x) - order(y));
}

/** The path of an operation with A's objects: the fixture, else A's first id for each parameter. */
function pathOf(op: Operation): string {
  if (PATHS[op.key]) return PATHS[op.key]!(A);
  const ids = pathIds(A);
  return op.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(ids[name]![0]!));
}

describe('robustness', () => {
  it('every fuzzed operation with path parameters has a path', () => {
    const ids = pathIds(A);
    // Operations with a body or query need the object their valid request is for; others take A's first id of each kind.
    const missing = fuzzed(operations(doc, schemas))
      .filter((op) => op.pathParams.length > 0 && !PATHS[op.key] && ((op.body || op.query.length > 0) || op.pathParams.some((name) => !ids[name]?.length)))
      .map((op) => op.key);
    expect(missing).toEqual([]);
  });

  it('no bad or edge input gets a 5xx or an answer outside the error envelope', async () => {
    const failures: string[] = [];
    let sentCount = 0;
    for (const op of fuzzed(operations(doc, schemas))) {
      const random = mulberry32(seedOf(op.key));
      const path = op.pathParams.length ? pathOf(op) : op.path;
      const query = validQuery(op);
      let cases: Input[] = [];
      if (op.query.length > 0) cases.push(...inputs.queryInputs(op, query).map((i) => ({ ...i, valid: judge.schemaTakesQuery(op, i.query ?? '') })));
      if (op.body && op.multipart) {
        cases.push(...inputs.formInputs(op, validBody(op) as Record<string, string>));
      } else if (op.body) {
        const q = encodeQuery(query);
        const valid = validBody(op);
        cases.push(...inputs.bodyInputs(op, valid).map((i) => ({ ...i, query: q || undefined, validBody: valid, valid: judge.schemaTakesBody(op, i.body) })));
        for (const h of op.headers) {
          for (const [what, junk] of HEADER_JUNK) {
            // Idempotency keys are the platform's, across operations: each operation its own.
            const value = junk.length >= 8 ? `${op.key.length}${h.name.length}${op.method}${junk}`.slice(0, junk.length) : junk;
            cases.push({ label: `header ${h.name} = ${what}`, query: q || undefined, body: valid, validBody: valid, headers: { [h.name]: value }, valid: value.length <= (h.schema?.maxLength ?? Infinity) && value.length >= (h.schema?.minLength ?? 0) ? undefined : false });
          }
        }
      }
      // Junk in each path parameter, the others (and the body) valid.
      if (op.pathParams.length > 0) cases.push(...pathInputs(op, path, cases.find((i) => i.label === 'valid body')?.body ?? (op.body && !op.multipart ? validBody(op) : undefined)));
      // Every input the schema takes reaches the service: those first, then a sample of the refused.
      const takes = cases.filter((i) => i.valid !== false);
      const refused = cases.filter((i) => i.valid === false);
      cases = [...shuffled(takes, random).slice(0, MAX_VALID), ...shuffled(refused, random).slice(0, MAX_INVALID)];
      for (const input of cases) {
        const answer = await send(op, path, input);
        sentCount++;
        if (process.env.FUZZ_LOG) console.log(describe_(op, path, input, answer));
        const problem = problemWith(answer, input.valid);
        if (problem) failures.push(`${problem}: ${describe_(op, path, input, answer)}`);
      }
    }
    expect(sentCount).toBeGreaterThan(1_000);
    expect(failures, `seed ${SEED} (FUZZ_SEED=${SEED} replays it)`).toEqual([]);
  });

  it('extreme but valid amounts get no 5xx', async () => {
    const failures: string[] = [];
    const MAX = 9_000_000_000_000_000;
    const p: TestPlatform = await t.createPlatform({ currencies: ['USD', 'JPY', 'BHD'] });
    const wide = ['USD', 'JPY', 'BHD'].map((currencyCode) => ({ currencyCode, minAmount: 1, maxAmount: MAX, requiredCounterpartyFields: [], enabledTransactionTypes: ['OUTGOING', 'INCOMING'] }));
    ok(await p.api.patch('/config', { supportedCurrencies: wide }), 200, 'config');
    const sender = await newCustomer(p, 'Max Sender');
    const payee = await newCustomer(p, 'Max Payee');
    const check = (what: string, res: { status: number; body: any }) => {
      const problem = problemWith({ status: res.status, body: res.body, text: JSON.stringify(res.body) }, undefined);
      if (process.env.FUZZ_LOG) console.log(`${what} → ${res.status} ${JSON.stringify(res.body).slice(0, 600)}`);
      if (problem) failures.push(`${problem}: ${what} → ${JSON.stringify(res.body).slice(0, 300)}`);
      return res;
    };
    for (const [currency, account] of Object.entries(sender.accounts)) {
      check(`fund ${currency} 2^53-1`, await p.api.post(`/sandbox/internal-accounts/${account}/fund`, { amount: Number.MAX_SAFE_INTEGER }));
      check(`fund ${currency} max`, await p.api.post(`/sandbox/internal-accounts/${account}/fund`, { amount: MAX }));
      check(`fund ${currency} max again`, await p.api.post(`/sandbox/internal-accounts/${account}/fund`, { amount: MAX }));
      check(`fund ${currency} max a third time`, await p.api.post(`/sandbox/internal-accounts/${account}/fund`, { amount: MAX }));
      check(`read ${currency} account`, await p.api.get('/customers/internal-accounts', { customerId: sender.id, currency }));
    }
    check('platform accounts', await p.api.get('/platform/internal-accounts'));
    for (const [from, to] of [['JPY', 'BHD'], ['BHD', 'JPY'], ['USD', 'JPY'], ['JPY', 'USD'], ['BHD', 'USD']]) {
      for (const side of ['SENDING', 'RECEIVING']) {
        const body = { source: { sourceType: 'ACCOUNT', accountId: sender.accounts[from!] }, destination: { destinationType: 'ACCOUNT', accountId: payee.accounts[to!] }, lockedCurrencySide: side, lockedCurrencyAmount: MAX };
        const q = check(`quote ${from}→${to} ${side} max`, await p.api.post('/quotes', body));
        if (q.status === 201) check(`execute quote ${from}→${to} ${side} max`, await p.api.post(`/quotes/${q.body.id}/execute`));
      }
    }
    check('exchange rates for the max', await p.api.get('/exchange-rates', { sourceCurrency: 'JPY', destinationCurrency: 'BHD', sendingAmount: MAX }));
    const ext = await usdAccount(p, sender.id);
    check('transfer-out of the max', await p.api.post('/transfer-out', { source: { accountId: sender.accounts.USD }, destination: { accountId: ext }, amount: MAX }));
    check('transfer-out of the max again', await p.api.post('/transfer-out', { source: { accountId: sender.accounts.USD }, destination: { accountId: ext }, amount: MAX }));
    check('transfer-in of the max', await p.api.post('/transfer-in', { source: { accountId: ext }, destination: { accountId: sender.accounts.USD }, amount: MAX }));
    check('sandbox UMA receive of the max', await p.api.post('/sandbox/uma/receive', { senderUmaAddress: SANDBOX_RECEIVER, customerId: payee.id, receivingCurrencyCode: 'USD', receivingCurrencyAmount: MAX }));
    check('transactions', await p.api.get('/transactions', { limit: 100 }));
    check('accounts at the end', await p.api.get('/customers/internal-accounts', { limit: 100 }));
    expect(failures).toEqual([]);
  });
});
