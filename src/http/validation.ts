import AjvModule, { type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import type { FastifyInstance, FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { invalidInput, type FieldError } from '../core/errors.js';

const Ajv = AjvModule.default ?? AjvModule;
const addFormats = addFormatsModule.default ?? addFormatsModule;

function makeAjv(coerce: boolean) {
  const ajv = new Ajv({
    allErrors: true,
    strict: false,
    discriminator: true,
    useDefaults: true,
    // Bodies are strict: a mistyped or unknown field is an error, never silently fixed or dropped.
    coerceTypes: coerce ? 'array' : false,
    removeAdditional: false,
  });
  addFormats(ajv);
  ajv.addFormat('date-time', { type: 'string', validate: isStorableDateTime });
  return ajv;
}

const rfc3339 = fullFormats['date-time'] as { validate: (value: string) => boolean };

/**
 * RFC 3339 date-times that are a real instant PostgreSQL can store: a leap second (`23:59:60`)
 * passes RFC 3339 but not JavaScript's Date, and an offset can carry year 9999 into 10000 or
 * year 0001 into year 0, which PostgreSQL would not read back the way Date prints them.
 */
export function isStorableDateTime(value: string): boolean {
  if (!rfc3339.validate(value)) return false;
  const time = Date.parse(value);
  if (Number.isNaN(time)) return false;
  const year = new Date(time).getUTCFullYear();
  return year >= 1 && year <= 9999;
}

/**
 * Fastify's validator builder: called once per encapsulation scope with that scope's shared
 * schemas (app.addSchema), so `$ref`s resolve in every scope. JSON bodies validate without
 * coercion; query strings, params and headers coerce strings.
 */
export function buildValidator(externalSchemas: Record<string, unknown> = {}): FastifySchemaCompiler<any> {
  const bodyAjv = makeAjv(false);
  const paramsAjv = makeAjv(true);
  for (const schema of Object.values(externalSchemas)) {
    bodyAjv.addSchema(schema as object);
    paramsAjv.addSchema(schema as object);
  }
  return ({ schema, httpPart }) => {
    const validate = (httpPart === 'body' ? bodyAjv : paramsAjv).compile(schema);
    return (httpPart === 'querystring' ? decimalNumbersOnly(schema, validate) : validate) as any;
  };
}

type Validate = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

const DECIMAL = /^-?[0-9]+(\.[0-9]+)?$/;

/**
 * Ajv coerces a query string the way JavaScript does (`+value`), so `0x10`, `1e3` and ` 100` were
 * read as 16, 1000 and 100. Numeric query parameters take plain decimals only.
 */
function decimalNumbersOnly(schema: any, validate: Validate): Validate {
  const numeric = Object.entries<any>(schema?.properties ?? {})
    .filter(([, property]) => property.type === 'integer' || property.type === 'number')
    .map(([name]) => name);
  if (numeric.length === 0) return validate;
  const checked: Validate = (data) => {
    const query = (data ?? {}) as Record<string, unknown>;
    const bad = numeric.filter((name) => typeof query[name] === 'string' && !DECIMAL.test(query[name] as string));
    if (bad.length > 0) {
      checked.errors = bad.map((name) => ({ instancePath: `/${name}`, schemaPath: '', keyword: 'type', params: {}, message: 'must be a decimal number' }));
      return false;
    }
    const valid = validate(data);
    checked.errors = validate.errors;
    return valid;
  };
  return checked;
}

/**
 * Most entries in `details.errors`. A body of a megabyte can hold tens of thousands of unknown
 * fields; listing them all cost time quadratic in their number, and told the client nothing more.
 */
export const MAX_FIELD_ERRORS = 50;

/** Turns Ajv errors into the envelope's `details.errors`, one entry per field (the first MAX_FIELD_ERRORS). */
export function toFieldErrors(errors: ErrorObject[], part: string | undefined): FieldError[] {
  const prefix = part && part !== 'body' ? `${part}.` : '';
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    if (out.length === MAX_FIELD_ERRORS) break;
    let path = error.instancePath.replace(/^\//, '').replace(/\//g, '.');
    let message = error.message ?? 'is invalid';
    if (error.keyword === 'required') {
      const missing = (error.params as { missingProperty: string }).missingProperty;
      path = path ? `${path}.${missing}` : missing;
      message = 'is required';
    } else if (error.keyword === 'additionalProperties') {
      const extra = (error.params as { additionalProperty: string }).additionalProperty;
      path = path ? `${path}.${extra}` : extra;
      message = 'is not a known field';
    } else if (error.keyword === 'enum') {
      message = `must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
    } else if (error.keyword === 'discriminator') {
      // Report the tag itself: "accountInfo.accountType is missing / not a known type".
      const { tag, error: kind } = error.params as { tag: string; error: 'tag' | 'mapping' };
      path = path ? `${path}.${tag}` : tag;
      message = kind === 'mapping' ? 'is not a known type' : 'is required and must be a string';
    }
    const field = `${prefix}${path}` || part || 'body';
    const constraint = error.keyword === 'discriminator' ? (message.startsWith('is not') ? 'enum' : 'required') : error.keyword;
    if (out.some((e) => e.field === field && (e.constraint === constraint || error.keyword === 'discriminator'))) continue;
    const key = `${field}|${error.keyword}`;
    // anyOf over literals reports each branch; keep one line per field and rule.
    if (seen.has(key) || (error.keyword === 'const' && seen.has(`${field}|anyOf`))) continue;
    seen.add(key);
    out.push({ field, constraint: error.keyword === 'anyOf' ? 'enum' : constraint, message });
  }
  // An anyOf failure repeats its branches' errors; drop those once the anyOf line exists.
  return out.filter((e) => !(e.constraint === 'const' && out.some((o) => o.field === e.field && o.constraint === 'enum')));
}

/**
 * preValidation for routes whose body the API marks optional: a bare POST reads as an empty
 * object, so the body schema (all fields optional) still checks what is sent.
 */
export async function optionalBody(request: FastifyRequest): Promise<void> {
  request.body ??= {};
}

/**
 * Operations that take no request body refuse one that says something, as bodies with unknown
 * fields are refused elsewhere: a client sending `{"amount": …}` to execute learns it was not read.
 * No body, `null` and `{}` are all nothing.
 */
export function refuseBodiesWhereNoneIsRead(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const schema = route.schema as { body?: unknown; consumes?: unknown } | undefined;
    const readsNoBody = [route.method].flat().every((method) => method === 'GET' || method === 'HEAD');
    if (readsNoBody || schema?.body || schema?.consumes) return;
    route.preValidation = [...[route.preValidation ?? []].flat(), refuseBody];
  });
}

async function refuseBody(request: FastifyRequest): Promise<void> {
  const body = request.body;
  const nothing = body === undefined || body === null || (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0);
  if (!nothing) throw invalidInput('body', 'this operation takes no request body; send none, or {}', 'type');
}
