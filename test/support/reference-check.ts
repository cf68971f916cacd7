// Checks what Corridor sends against the production API's OpenAPI document, when that document
// sits beside the project (../shared/reference; never committed): the test client calls
// `checkAgainstReference` for every 2xx response, and a closing test app calls `webhookProblems`
// for every event. So every test that reads a response or causes an event also checks that a
// client of the production API could read it.
import { existsSync, readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';

const REFERENCE = new URL('../../../shared/reference/openapi-2025-10-13.yaml', import.meta.url);

type Schema = Record<string, any>;
interface Operation {
  method: string;
  pattern: RegExp;
  responses: Record<string, Schema>;
}

/**
 * The reference's unions are `oneOf` over objects that allow extra properties, so a body often
 * matches several branches; what a client needs is that it matches one. `anyOf` says that.
 */
function loosenUnions(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(loosenUnions);
  if (!node || typeof node !== 'object') return node;
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'discriminator' || key === 'example' || key === 'examples') continue;
    out[key === 'oneOf' ? 'anyOf' : key] = loosenUnions(value);
  }
  return out;
}

/** Refs point into the reference's components, registered under the id `reference`. */
function rebase(schema: Schema): Schema {
  return JSON.parse(JSON.stringify(schema).replace(/"\$ref":"#\//g, '"$ref":"reference#/'));
}

/** The production API's OpenAPI document as written, when it is beside the project. */
export const referenceDocument: Schema | undefined = existsSync(REFERENCE) ? parse(readFileSync(REFERENCE, 'utf8')) : undefined;

function load() {
  if (!referenceDocument) return undefined;
  const doc = loosenUnions(referenceDocument) as Schema;
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats.default(ajv);
  ajv.addSchema({ $id: 'reference', components: doc.components });
  const webhooks = new Map<string, Schema>();
  for (const [name, item] of Object.entries<Schema>(doc.webhooks ?? {})) {
    const schema = item.post?.requestBody?.content?.['application/json']?.schema;
    if (schema) webhooks.set(name, rebase(schema));
  }
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<Schema>(doc.paths)) {
    // Literal segments first: /quotes/{id} must not swallow /quotes/lookup.
    const pattern = new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`);
    for (const [method, op] of Object.entries<Schema>(item)) {
      if (op?.responses) operations.push({ method: method.toUpperCase(), pattern, responses: op.responses });
    }
  }
  const literalFirst = (o: Operation) => (o.pattern.source.match(/\[\^\/\]\+/g) ?? []).length;
  operations.sort((a, b) => literalFirst(a) - literalFirst(b));
  return { ajv, operations, webhooks, validators: new Map<string, ValidateFunction | null>() };
}

const reference = load();

/** Bodies that show a Corridor extension the reference cannot describe, and why they are let through. */
const EXTENSIONS: Array<{ shows: (item: any) => boolean; why: string }> = [
  { shows: (item) => item?.accountInfo?.ifscCode !== undefined, why: 'INR bank accounts paid by IMPS; the reference knows only UPI' },
];

function showsExtension(body: any): boolean {
  const items = Array.isArray(body?.data) ? [body, ...body.data] : [body];
  return items.some((item) => EXTENSIONS.some((e) => e.shows(item)));
}

function validatorFor(method: string, path: string, status: number): ValidateFunction | null {
  if (!reference) return null;
  const op = reference.operations.find((o) => o.method === method && o.pattern.test(path));
  const cacheKey = `${method} ${op?.pattern.source} ${status}`;
  if (!reference.validators.has(cacheKey)) {
    const schema = op?.responses[String(status)]?.content?.['application/json']?.schema;
    reference.validators.set(cacheKey, schema ? reference.ajv.compile(rebase(schema)) : null);
  }
  return reference.validators.get(cacheKey) ?? null;
}

/** Throws when a 2xx JSON body of a reference operation does not match the reference's schema for it. */
export function checkAgainstReference(method: string, apiPath: string, status: number, body: unknown): void {
  if (status < 200 || status > 299 || body === undefined || typeof body === 'string') return;
  const path = apiPath.split('?')[0];
  const validate = validatorFor(method, path, status);
  if (!validate || validate(body) || showsExtension(body)) return;
  const problems = (validate.errors ?? []).slice(0, 8).map((e) => `${e.instancePath || '/'} ${e.message}`);
  throw new Error(`${method} ${path} → ${status}: the body does not match the production API's schema:\n  ${problems.join('\n  ')}`);
}

/** The reference's webhook (its `webhooks` key) that carries events of this type. */
const WEBHOOK_OF: Array<[RegExp, string]> = [
  [/^AGENT_ACTION\./, 'agent-action'],
  [/^INCOMING_PAYMENT\./, 'incoming-payment'],
  [/^OUTGOING_PAYMENT\./, 'outgoing-payment'],
  [/^TEST$/, 'test-webhook'],
  [/^BULK_UPLOAD\./, 'bulk-upload'],
  [/^INVITATION\./, 'invitation-claimed'],
  [/^CUSTOMER\./, 'customer-update'],
  [/^INTERNAL_ACCOUNT\./, 'internal-account-status'],
  [/^VERIFICATION\./, 'verification-update'],
];
const webhookValidators = new Map<string, ValidateFunction>();

/** What is wrong with a webhook body by the reference's schema for its event type; undefined when nothing is. */
export function webhookProblems(body: any): string | undefined {
  if (!reference || typeof body?.type !== 'string') return undefined;
  const name = WEBHOOK_OF.find(([pattern]) => pattern.test(body.type))?.[1];
  const schema = name && reference.webhooks.get(name);
  if (!name || !schema) return undefined;
  let validate = webhookValidators.get(name);
  if (!validate) webhookValidators.set(name, (validate = reference.ajv.compile(schema)));
  if (validate(body) || showsExtension(body.data)) return undefined;
  return `${body.type} webhook: ${(validate.errors ?? []).slice(0, 8).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ')}`;
}
