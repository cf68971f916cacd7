// Clients of the production API must work against Corridor unchanged. When the production API's
// OpenAPI document sits beside the project (../shared/reference; it is never committed, so a clone
// without it skips this file), this compares it with Corridor's /openapi.json: every operation
// exists and answers the same 2xx codes, and every query parameter, every property path of its
// request and 2xx response bodies, and every enum value the reference declares, Corridor declares
// too. Deliberate differences are listed below with their reason. Response bodies themselves are
// checked by the test client on every call (support/reference-check.ts); the last test here shows
// that check can fail, as does the check of every event's webhook body when a test app closes.
// Every request example in the reference is also sent to Corridor: none may be refused for its shape.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../src/core/clock.js';
import { emitEvents } from '../src/core/events.js';
import { API_PREFIX } from '../src/http/app.js';
import { connectedAgent } from './support/agents.js';
import { startTestApp, type TestApp } from './support/app.js';
import { checkAgainstReference, referenceDocument } from './support/reference-check.js';

/** Property paths (suffixes) of the reference that Corridor leaves out on purpose. */
const OMITTED: Array<{ path: RegExp; why: string }> = [
  {
    path: /\.accountOrWalletInfo\.(phoneNumber|provider|region|paymentUrl|bankAccountType)$/,
    why: 'deposit details are a bank account or a wallet address; Corridor issues no mobile-money or hosted-page instructions',
  },
  { path: /^get \/uma-providers .*\.data\[\]\.(lei|logoUrl)$/, why: 'providers are known from sightings, which carry no LEI or logo' },
];

type Schema = Record<string, any>;
type Operation = { parameters?: Schema[]; requestBody?: Schema; responses?: Record<string, Schema> };

const skip = !referenceDocument;
const reference = referenceDocument as Schema;
let t: TestApp;
let ours: Schema;

beforeAll(async () => {
  if (skip) return;
  t = await startTestApp();
  ours = (await t.anonymous.get('/openapi.json')).body;
});
afterAll(() => t?.close());

function resolve(doc: Schema, schema: Schema | undefined): Schema | undefined {
  let s = schema;
  for (let hops = 0; s?.$ref && hops < 20; hops++) s = s.$ref.split('/').slice(1).reduce((o: Schema, k: string) => o[k], doc);
  return s;
}

/** Every property path of a schema (through compositions, conditionals and arrays), with its enum values. */
function shape(doc: Schema, schema: Schema | undefined, at = '', out = new Map<string, Set<unknown>>(), depth = 0) {
  const s = resolve(doc, schema);
  if (!s || depth > 12) return out;
  const values = out.get(at) ?? new Set<unknown>();
  for (const v of s.enum ?? []) values.add(v);
  if (s.const !== undefined) values.add(s.const);
  out.set(at, values);
  for (const sub of [...(s.allOf ?? []), ...(s.oneOf ?? []), ...(s.anyOf ?? []), s.then, s.else]) if (sub) shape(doc, sub, at, out, depth + 1);
  for (const [name, prop] of Object.entries<Schema>(s.properties ?? {})) shape(doc, prop, `${at}.${name}`, out, depth + 1);
  if (s.items) shape(doc, s.items, `${at}[]`, out, depth + 1);
  return out;
}

const jsonSchema = (doc: Schema, part: Schema | undefined) => resolve(doc, part)?.content?.['application/json']?.schema;
const successCodes = (op: Operation) => Object.keys(op.responses ?? {}).filter((code) => code.startsWith('2')).sort();
const key = (method: string, path: string) => `${method} ${path.replace(/\{[^}]+\}/g, '{}')}`;

function operations(doc: Schema, prefix = ''): Map<string, Operation> {
  const found = new Map<string, Operation>();
  for (const [path, item] of Object.entries<Schema>(doc.paths)) {
    for (const [method, op] of Object.entries<Operation>(item)) {
      if (['get', 'post', 'put', 'patch', 'delete'].includes(method) && path.startsWith(prefix)) found.set(key(method, path.slice(prefix.length)), op);
    }
  }
  return found;
}

/** What the reference declares for one operation and Corridor does not. */
function differences(id: string, refOp: Operation, ourOp: Operation): string[] {
  const problems: string[] = [];
  const codes = [successCodes(refOp), successCodes(ourOp)];
  if (codes[0].join() !== codes[1].join()) problems.push(`${id}: answers ${codes[1].join()} where the reference answers ${codes[0].join()}`);
  // Header names are case-insensitive; Fastify declares them in lower case.
  const param = (p: Schema) => `${p.in} ${p.in === 'header' ? p.name.toLowerCase() : p.name}`;
  const ourParams = new Set((ourOp.parameters ?? []).map(param));
  for (const p of (refOp.parameters ?? []).map((x) => resolve(reference, x)!)) {
    if (!ourParams.has(param(p))) problems.push(`${id}: no ${p.in} parameter ${p.name}`);
  }
  const bodies: Array<[string, Schema | undefined, Schema | undefined]> = [['request', jsonSchema(reference, refOp.requestBody), jsonSchema(ours, ourOp.requestBody)]];
  for (const code of codes[0]) bodies.push([code, jsonSchema(reference, refOp.responses?.[code]), jsonSchema(ours, ourOp.responses?.[code])]);
  for (const [body, refSchema, ourSchema] of bodies) {
    if (!refSchema) continue;
    const mine = shape(ours, ourSchema);
    for (const [path, values] of shape(reference, refSchema)) {
      const where = `${id} ${body}${path}`;
      if (OMITTED.some((o) => o.path.test(where))) continue;
      const known = mine.get(path);
      if (!known) problems.push(`${where}: missing`);
      else if (known.size > 0) for (const v of values) if (!known.has(v)) problems.push(`${where}: no enum value ${String(v)}`);
    }
  }
  return problems;
}

describe.skipIf(skip)('the production API reference (../shared/reference)', () => {
  it('every operation exists in Corridor with its 2xx codes, parameters, body fields and enum values', () => {
    const ourOps = operations(ours, API_PREFIX);
    const problems: string[] = [];
    for (const [id, refOp] of operations(reference)) {
      const ourOp = ourOps.get(id);
      if (!ourOp) problems.push(`${id}: missing`);
      else problems.push(...differences(id, refOp, ourOp));
    }
    expect(ourOps.size).toBeGreaterThan(60);
    expect(problems).toEqual([]);
  });

  it('the test client refuses a response body the reference cannot parse', () => {
    const customer = { id: 'Customer:1', platformCustomerId: 'p1', customerType: 'INDIVIDUAL', umaAddress: '$a@b.c', createdAt: '2026-01-01T00:00:00Z' };
    expect(() => checkAgainstReference('GET', '/customers/Customer:1', 200, { ...customer, kycStatus: 'APPROVED' })).not.toThrow();
    expect(() => checkAgainstReference('GET', '/customers/Customer:1', 200, { ...customer, kycStatus: 'SOMEWHAT' })).toThrow(/kycStatus/);
    expect(() => checkAgainstReference('GET', '/customers/Customer:1', 200, { ...customer, id: 7 })).toThrow(/does not match/);
  });

  it('closing a test app refuses events a webhook client of the reference could not parse', async () => {
    const app = await startTestApp();
    const p = await app.createPlatform();
    const customer = (await p.api.post('/customers', { customerType: 'INDIVIDUAL', fullName: 'Ada Lovelace' })).body;
    await emitEvents(app.corridor.database.db, p.platform, [{ type: 'CUSTOMER.KYC_APPROVED', data: { ...customer, customerType: 'ROBOT' } }], systemClock);
    await expect(app.close()).rejects.toThrow(/CUSTOMER\.KYC_APPROVED webhook/);
  });

  it('accepts the shape of every request example in the reference', async () => {
    const p = await t.createPlatform();
    const customer = (await p.api.post('/customers', { customerType: 'INDIVIDUAL', fullName: 'Ada Lovelace' })).body;
    const agent = await connectedAgent(t, p, customer.id);
    // Ajv keywords that mean the body's shape was refused; other 400s judge its content (a
    // checksum, a currency the platform does not support) and depend on the example's values.
    const SHAPE = new Set(['required', 'type', 'additionalProperties', 'enum', 'const']);
    const refused: string[] = [];
    let sent = 0;
    for (const [path, item] of Object.entries<Schema>(reference.paths)) {
      for (const [method, op] of Object.entries<Schema>(item)) {
        const content = resolve(reference, op.requestBody)?.content?.['application/json'];
        if (!content) continue;
        const examples = Object.values<Schema>(content.examples ?? {}).map((e) => resolve(reference, e)?.value);
        for (const body of [content.example, ...examples].filter((b) => b !== undefined)) {
          const api = path.startsWith('/agents/me') ? agent.api : p.api;
          const res = await api.request({ method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, 'Unknown:1'), body });
          sent++;
          const shapeErrors = res.status === 400 ? (res.body.details?.errors ?? []).filter((e: { constraint: string }) => SHAPE.has(e.constraint)) : [];
          if (shapeErrors.length > 0) refused.push(`${method.toUpperCase()} ${path}: ${JSON.stringify(shapeErrors)}`);
        }
      }
    }
    expect(sent).toBeGreaterThan(25);
    expect(refused).toEqual([]);
  });
});
