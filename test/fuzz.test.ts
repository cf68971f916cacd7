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
import AjvModule from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_PREFIX } from '../src/http/app.js';
import { agentPolicy, connectedAgent, type TestAgent } from './support/agents.js';
import { basicAuth, type TestApp, type TestPlatform } from './support/app.js';
import { PATH_OP_BODIES, PATH_OP_QUERIES, pathIds, queryValues, REFERENCE_PROBES } from './support/isolation-routes.js';
import { extAccountBody, ok, quoteBody, realtimeQuoteBody, SANDBOX_RECEIVER, umaReceiveBody, type WorldA, type WorldB, startWorlds } from './support/isolation-world.js';
import { newCustomer, usdAccount } from './support/quotes.js';
import { multipart, PDF } from './support/verification.js';
import { CURSORS, HEADER_JUNK, LONG, mulberry32, nested, QUERY_JUNK, seedOf, shuffled, STRINGS, swapCase, SEED } from './support/fuzz-values.js';
import { getAt, omit, schemaWalker, withValue, type SchemaWalker } from './support/fuzz-schemas.js';
import type { WebhookReceiver } from './support/webhook-receiver.js';

const Ajv = (AjvModule as any).default ?? AjvModule;
const addFormats = (addFormatsModule as any).default ?? addFormatsModule;

/** Inputs per operation: those the operation's schema accepts (they reach the service) and those it refuses. */
const MAX_VALID = 400;
const MAX_INVALID = 120;

let t: TestApp;
let receiver: WebhookReceiver;
let doc: any;
let schemas: SchemaWalker;
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
// The OpenAPI document

interface Operation {
  key: string;
  method: string;
  /** Without the API prefix. */
  path: string;
  pathParams: string[];
  query: Array<{ name: string; required: boolean; schema: any }>;
  headers: Array<{ name: string; schema: any }>;
  /** The JSON body's schema, or the multipart form's. */
  body?: any;
  multipart: boolean;
  /** Whether the document says a body must be sent (false: a bare POST is fine). */
  bodyRequired: boolean;
  auth: 'basic' | 'agent' | 'none';
}

function operations(): Operation[] {
  const out: Operation[] = [];
  for (const [fullPath, item] of Object.entries<any>(doc.paths)) {
    const path = fullPath.slice(API_PREFIX.length);
    for (const [method, op] of Object.entries<any>(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const security: any[] = op.security ?? doc.security ?? [];
      const params: any[] = [...(item.parameters ?? []), ...(op.parameters ?? [])];
      const content = op.requestBody?.content ?? {};
      out.push({
        key: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!),
        query: params.filter((p) => p.in === 'query').map((p) => ({ name: p.name, required: !!p.required, schema: schemas.deref(p.schema) })),
        headers: params.filter((p) => p.in === 'header').map((p) => ({ name: p.name, schema: schemas.deref(p.schema) })),
        body: schemas.deref(content['application/json']?.schema ?? content['multipart/form-data']?.schema),
        multipart: !!content['multipart/form-data'],
        bodyRequired: op.requestBody?.required === true,
        auth: security.some((s) => 'BasicAuth' in s) ? 'basic' : security.some((s) => 'AgentAuth' in s) ? 'agent' : 'none',
      });
    }
  }
  return out;
}

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
// Inputs

interface Input {
  label: string;
  /** Query string, already encoded (without `?`). */
  query?: string;
  /** JSON body (any value; `undefined` sends none) or form fields. */
  body?: unknown;
  form?: { fields: Record<string, string | undefined>; file: boolean; csv?: string };
  /** Whether the operation's schema takes the input; undefined: not judged. */
  valid?: boolean;
  /** A path other than the operation's fixture (junk in a path parameter). */
  path?: string;
  /** The valid body this one was made from. */
  validBody?: unknown;
  headers?: Record<string, string>;
}

function encodeQuery(query: Record<string, string>): string {
  return Object.entries(query)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&');
}

function bodyInputs(op: Operation, valid: any): Input[] {
  const out: Input[] = [
    { label: 'body []', body: [] },
    { label: 'body null', body: null },
    { label: 'body "x"', body: 'x' },
    { label: 'body {}', body: {} },
    { label: 'body 0', body: 0 },
    { label: 'body deeply nested', body: nested(60) },
    { label: 'body nested 30', body: { ...valid, fuzz: nested(30) } },
    { label: 'valid body', body: valid },
    { label: 'unknown field', body: { ...valid, fuzzUnknown: 'x' } },
    { label: 'no body', body: undefined },
  ];
  for (const { path, value, schema } of schemas.places(op.body, valid)) {
    for (const [what, replacement] of schemas.replacements(schema, value)) out.push({ label: `${path.join('.')} = ${what}`, body: withValue(valid, path, replacement) });
    out.push({ label: `${path.join('.')} left out`, body: withValue(valid, path.slice(0, -1), omit(getAt(valid, path.slice(0, -1)), path[path.length - 1]!)) });
  }
  return out;
}

/** Cursors that decode, but to nonsense, and garbage that does not. */
function queryInputs(op: Operation, valid: Record<string, string>): Input[] {
  const out: Input[] = [{ label: 'valid query', query: encodeQuery(valid) }];
  const rest = (name: string) => encodeQuery(Object.fromEntries(Object.entries(valid).filter(([k]) => k !== name)));
  const join = (...parts: string[]) => parts.filter(Boolean).join('&');
  for (const q of op.query) {
    const junk: Array<[string, string]> = [...QUERY_JUNK];
    if (q.name === 'cursor') junk.push(...CURSORS.map((c, i): [string, string] => [`cursor ${i}`, c]));
    if (q.schema?.enum) for (const e of q.schema.enum.slice(0, 2)) junk.push([`wrong case ${e}`, swapCase(String(e))]);
    if (q.schema?.maxLength) junk.push([`maxLength ${q.schema.maxLength}`, 'a'.repeat(q.schema.maxLength)]);
    for (const [what, raw] of junk) out.push({ label: `?${q.name} = ${what}`, query: join(rest(q.name), `${q.name}=${raw}`) });
    const good = valid[q.name] ?? String(schemas.sample(q.schema) ?? 'x');
    out.push({ label: `?${q.name} repeated`, query: join(rest(q.name), `${q.name}=${encodeURIComponent(good)}&${q.name}=${encodeURIComponent(good)}`) });
    out.push({ label: `?${q.name} repeated, different`, query: join(rest(q.name), `${q.name}=${encodeURIComponent(good)}&${q.name}=junk`) });
    out.push({ label: `?${q.name}[] `, query: join(rest(q.name), `${q.name}[]=${encodeURIComponent(good)}`) });
    out.push({ label: `?${q.name} without a value`, query: join(rest(q.name), q.name) });
    if (q.required) out.push({ label: `?${q.name} left out`, query: rest(q.name) });
  }
  for (const [from, to] of [['startDate', 'endDate'], ['createdAfter', 'createdBefore'], ['updatedAfter', 'updatedBefore']] as const) {
    if (!op.query.some((q) => q.name === from) || !op.query.some((q) => q.name === to)) continue;
    out.push({ label: `${from} after ${to}`, query: join(encodeQuery(valid), `${from}=2030-01-01T00:00:00Z&${to}=2020-01-01T00:00:00Z`) });
    out.push({ label: `${from} 0001, ${to} 9999`, query: join(encodeQuery(valid), `${from}=0001-01-01T00:00:00Z&${to}=9999-12-31T23:59:59Z`) });
    out.push({ label: `${from} 9999, ${to} 0001`, query: join(encodeQuery(valid), `${from}=9999-12-31T23:59:59Z&${to}=0001-01-01T00:00:00Z`) });
  }
  out.push({ label: 'unknown parameter', query: join(encodeQuery(valid), `fuzzUnknown=${LONG}`) });
  return out;
}

function formInputs(op: Operation, valid: Record<string, string>): Input[] {
  const out: Input[] = [
    { label: 'valid form', form: { fields: valid, file: true } },
    { label: 'form without a file', form: { fields: valid, file: false } },
    { label: 'JSON instead of a form', body: valid },
  ];
  for (const name of Object.keys(schemas.deref(op.body)?.properties ?? {})) {
    if (name === 'file') continue;
    for (const [what, value] of [...STRINGS.filter(([, v]) => typeof v === 'string'), ['wrong case', swapCase(String(valid[name] ?? 'x'))]] as Array<[string, string]>) {
      out.push({ label: `form ${name} = ${what}`, form: { fields: { ...valid, [name]: value }, file: true } });
    }
    out.push({ label: `form ${name} left out`, form: { fields: { ...valid, [name]: undefined }, file: true } });
  }
  if (op.key === 'POST /customers/bulk/csv') {
    const rows = [
      'platformCustomerId,customerType,fullName\nfz-1,INDIVIDUAL,Ok',
      `platformCustomerId,customerType,fullName\nfz-2,INDIVIDUAL,${LONG}`,
      'platformCustomerId,customerType,fullName\nfz-3,individual,\u0000',
      'platformCustomerId,customerType,fullName,birthDate\nfz-4,INDIVIDUAL,Old,0001-01-01',
      'platformCustomerId,customerType,fullName,birthDate\nfz-5,INDIVIDUAL,Bad,2024-02-30',
      '"unclosed,quote\n',
      '',
      '\ufeff😀,😀\n😀,😀',
    ];
    rows.forEach((csv, i) => out.push({ label: `csv ${i}`, form: { fields: {}, file: true, csv } }));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Judging

const ajv = new Ajv({ strict: false, allErrors: false, discriminator: true, validateFormats: true });
addFormats(ajv);
const ajvQuery = new Ajv({ strict: false, coerceTypes: 'array', validateFormats: true });
addFormats(ajvQuery);
const bodyValidators = new Map<string, any>();
const queryValidators = new Map<string, any>();

function schemaTakesBody(op: Operation, body: unknown): boolean | undefined {
  if (op.multipart) return undefined;
  if (!bodyValidators.has(op.key)) bodyValidators.set(op.key, ajv.compile({ ...op.body, components: doc.components }));
  // No body (or `null`, which the API reads as none) is the operation's business where one is optional.
  if (body === undefined || body === null) return op.bodyRequired ? false : undefined;
  return bodyValidators.get(op.key)(structuredClone(body)) as boolean;
}

function schemaTakesQuery(op: Operation, raw: string): boolean | undefined {
  const params = new Map<string, string[]>();
  for (const part of raw.split('&').filter(Boolean)) {
    const [k, v = ''] = part.split('=');
    let key: string;
    let value: string;
    try {
      key = decodeURIComponent(k!);
      value = decodeURIComponent(v);
    } catch {
      return false; // not a query string the server can read
    }
    if (value.includes('\u0000') || /[\ud800-\udfff]/.test(value.replace(/[\ud800-\udbff][\udc00-\udfff]/g, ''))) return false;
    params.set(key, [...(params.get(key) ?? []), value]);
  }
  if ([...params.values()].some((v) => v.length > 1)) return undefined; // repeated: not judged
  if (!queryValidators.has(op.key)) {
    const schema = { components: doc.components, type: 'object', properties: Object.fromEntries(op.query.map((q) => [q.name, q.schema])), required: op.query.filter((q) => q.required).map((q) => q.name) };
    queryValidators.set(op.key, ajvQuery.compile(schema));
  }
  const query = Object.fromEntries([...params].map(([k, v]) => [k, v[0]]));
  return queryValidators.get(op.key)(query) as boolean;
}

interface Answer {
  status: number;
  body: any;
  text: string;
}

function problemWith(answer: Answer, valid: boolean | undefined): string | undefined {
  if (answer.status >= 500) return `${answer.status}`;
  if (answer.status >= 400) {
    const b = answer.body;
    if (!b || typeof b !== 'object' || Array.isArray(b)) return `${answer.status} without the error envelope`;
    if (b.status !== answer.status) return `${answer.status} with envelope status ${b.status}`;
    if (typeof b.code !== 'string' || b.code.length === 0) return `${answer.status} without a code`;
    if (typeof b.message !== 'string') return `${answer.status} without a message`;
    if (b.details !== undefined && (typeof b.details !== 'object' || b.details === null)) return `${answer.status} with details that are not an object`;
    return undefined;
  }
  if (answer.status >= 200 && answer.status < 300 && valid === false) return `${answer.status} ACCEPTED an input its schema refuses`;
  return undefined;
}

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

const PATH_JUNK: Array<[string, string]> = [
  ['%00', '%00'],
  ['NUL in an id', 'Customer%3A%00'],
  ['%ff', '%ff'],
  ['100 chars', 'a'.repeat(100)],
  ['emoji', encodeURIComponent('😀名前')],
  ['SQL', encodeURIComponent(`'; drop table customers; --`)],
  ['wrong prefix', encodeURIComponent('Token:01a22264-9c99-70c2-899a-a1abd2bf1cde')],
  ['nil id', encodeURIComponent('Customer:00000000-0000-0000-0000-000000000000')],
  ['no uuid', encodeURIComponent('Customer:')],
  ['dot dot', '..'],
  ['encoded dot dot', '%2e%2e'],
  ['blank', '%20'],
  ['lone surrogate escape', '%ED%A0%80'],
  ['control chars', '%01%1b%7f'],
  ['number', '1e308'],
];

function pathInputs(op: Operation, path: string, body: unknown): Input[] {
  const out: Input[] = [];
  const valid = path.split('/');
  const template = op.path.split('/');
  template.forEach((segment, i) => {
    if (!segment.startsWith('{')) return;
    for (const [what, junk] of PATH_JUNK) {
      const parts = [...valid];
      parts[i] = junk;
      out.push({ label: `path ${segment} = ${what}`, path: parts.join('/'), body });
    }
  });
  return out;
}

describe('robustness', () => {
  it('every fuzzed operation with path parameters has a path', () => {
    const ids = pathIds(A);
    // Operations with a body or query need the object their valid request is for; others take A's first id of each kind.
    const missing = fuzzed(operations())
      .filter((op) => op.pathParams.length > 0 && !PATHS[op.key] && ((op.body || op.query.length > 0) || op.pathParams.some((name) => !ids[name]?.length)))
      .map((op) => op.key);
    expect(missing).toEqual([]);
  });

  it('no bad or edge input gets a 5xx or an answer outside the error envelope', async () => {
    const failures: string[] = [];
    let sentCount = 0;
    for (const op of fuzzed(operations())) {
      const random = mulberry32(seedOf(op.key));
      const path = op.pathParams.length ? pathOf(op) : op.path;
      const query = validQuery(op);
      let inputs: Input[] = [];
      if (op.query.length > 0) inputs.push(...queryInputs(op, query).map((i) => ({ ...i, valid: schemaTakesQuery(op, i.query ?? '') })));
      if (op.body && op.multipart) {
        inputs.push(...formInputs(op, validBody(op) as Record<string, string>));
      } else if (op.body) {
        const q = encodeQuery(query);
        const valid = validBody(op);
        inputs.push(...bodyInputs(op, valid).map((i) => ({ ...i, query: q || undefined, validBody: valid, valid: schemaTakesBody(op, i.body) })));
        for (const h of op.headers) {
          for (const [what, junk] of HEADER_JUNK) {
            // Idempotency keys are the platform's, across operations: each operation its own.
            const value = junk.length >= 8 ? `${op.key.length}${h.name.length}${op.method}${junk}`.slice(0, junk.length) : junk;
            inputs.push({ label: `header ${h.name} = ${what}`, query: q || undefined, body: valid, validBody: valid, headers: { [h.name]: value }, valid: value.length <= (h.schema?.maxLength ?? Infinity) && value.length >= (h.schema?.minLength ?? 0) ? undefined : false });
          }
        }
      }
      // Junk in each path parameter, the others (and the body) valid.
      if (op.pathParams.length > 0) inputs.push(...pathInputs(op, path, inputs.find((i) => i.label === 'valid body')?.body ?? (op.body && !op.multipart ? validBody(op) : undefined)));
      // Every input the schema takes reaches the service: those first, then a sample of the refused.
      const takes = inputs.filter((i) => i.valid !== false);
      const refused = inputs.filter((i) => i.valid === false);
      inputs = [...shuffled(takes, random).slice(0, MAX_VALID), ...shuffled(refused, random).slice(0, MAX_INVALID)];
      for (const input of inputs) {
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
