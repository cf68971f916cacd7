import AjvModule, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import type { FastifyInstance, FastifyRequest, FastifySchema, FastifySchemaCompiler, RouteOptions } from 'fastify';
import { invalidInput, type FieldError } from '../core/errors.js';

const Ajv = AjvModule.default ?? AjvModule;
const addFormats = addFormatsModule.default ?? addFormatsModule;

function makeAjv(coerce: boolean, allErrors: boolean) {
  const ajv = new Ajv({
    allErrors,
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
 *
 * Each schema validates first with a fail-fast Ajv (stops at the first error), then, only if the
 * input is invalid and small, again with an allErrors Ajv to list every bad field (see
 * failFastThenAllErrors). The allErrors instances are made, and their schemas compiled, on first need.
 */
export function buildValidator(externalSchemas: Record<string, unknown> = {}): FastifySchemaCompiler<any> {
  const shared = Object.values(externalSchemas).map(refusingBlanks) as object[];
  const withShared = (ajv: AjvInstance) => {
    for (const schema of shared) ajv.addSchema(schema);
    return ajv;
  };
  const failFast = { body: withShared(makeAjv(false, false)), params: withShared(makeAjv(true, false)) };
  const allErrors: { body?: AjvInstance; params?: AjvInstance } = {};
  return ({ schema, httpPart }) => {
    const part = httpPart === 'body' ? 'body' : 'params';
    schema = refusingBlanks(schema);
    const first = failFast[part].compile(schema);
    let all: Validate | undefined;
    const validate = failFastThenAllErrors(first, () => (all ??= (allErrors[part] ??= withShared(makeAjv(part === 'params', true))).compile(schema)));
    return (httpPart === 'querystring' ? decimalNumbersOnly(schema, validate) : validate) as any;
  };
}

type AjvInstance = InstanceType<typeof Ajv>;

/** The pattern refusingBlanks adds: at least one character that is not white space. */
const NOT_BLANK = '\\S';

/**
 * A copy of `schema` in which a string that must not be empty (`minLength` ≥ 1) must not be blank
 * either: a name of three spaces is as missing as an empty one. Strings with a `pattern`, a
 * `format`, an `enum` or a `const` say precisely what they take and are left as they are.
 */
export function refusingBlanks<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map(refusingBlanks) as T;
  if (!schema || typeof schema !== 'object') return schema;
  const copy = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, refusingBlanks(value)])) as Record<string, unknown>;
  const free = !('pattern' in copy || 'format' in copy || 'enum' in copy || 'const' in copy);
  if (copy.type === 'string' && typeof copy.minLength === 'number' && copy.minLength >= 1 && free) copy.pattern = NOT_BLANK;
  return copy as T;
}

type Validate = ((data: unknown, dataCxt?: Parameters<ValidateFunction>[1]) => boolean) & { errors?: ErrorObject[] | null; schemaEnv?: unknown };

/**
 * Most JSON values (objects, arrays and scalars, each counted once) an invalid input may hold and
 * still be validated again to list all its errors. allErrors walks and records every bad field, so
 * a megabyte of unknown fields or bad items cost tens of milliseconds of CPU per request, for
 * errors cut to MAX_FIELD_ERRORS anyway; a bigger invalid input reports the fail-fast errors only.
 */
export const ALL_ERRORS_MAX_VALUES = 10_000;

/**
 * Valid input takes one fail-fast pass. Invalid input of at most ALL_ERRORS_MAX_VALUES values is
 * validated again with allErrors for the full list; a bigger one reports the fail-fast error.
 * The second pass sees data the first may have changed (useDefaults only fills absent fields,
 * coercion leaves a value of the type it coerced to), so it reports what one allErrors pass would.
 */
function failFastThenAllErrors(first: Validate, allErrors: () => Validate): Validate {
  const validate: Validate = (data, dataCxt) => {
    if (first(data, dataCxt)) {
      validate.errors = null;
      return true;
    }
    validate.errors = first.errors;
    // The first pass may have replaced a coerced root in its parent; validate what is there now.
    const current = dataCxt ? (dataCxt.parentData as Record<string | number, unknown>)[dataCxt.parentDataProperty] : data;
    if (hasAtMostValues(current, ALL_ERRORS_MAX_VALUES)) {
      const all = allErrors();
      if (!all(current, dataCxt) && all.errors?.length) validate.errors = all.errors;
    }
    return false;
  };
  // Fastify passes the parent (so Ajv may replace a coerced root) only to functions that carry this.
  validate.schemaEnv = first.schemaEnv;
  return validate;
}

/**
 * Whether `data` holds at most `limit` JSON values. Stops as soon as it knows there are more, so
 * the walk costs at most about `limit` steps whatever the size of the input.
 */
export function hasAtMostValues(data: unknown, limit: number): boolean {
  const pending: unknown[] = [data];
  let seen = 0;
  while (pending.length > 0) {
    const value = pending.pop();
    seen++;
    if (value === null || typeof value !== 'object') continue;
    if (Array.isArray(value)) {
      for (const item of value) {
        pending.push(item);
        if (seen + pending.length > limit) return false;
      }
    } else {
      for (const key in value) {
        pending.push((value as Record<string, unknown>)[key]);
        if (seen + pending.length > limit) return false;
      }
    }
  }
  return seen <= limit;
}

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
    const blank = error.keyword === 'pattern' && (error.params as { pattern: string }).pattern === NOT_BLANK;
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
    } else if (blank) {
      message = 'must not be blank';
    } else if (error.keyword === 'discriminator') {
      // Report the tag itself: "accountInfo.accountType is missing / not a known type".
      const { tag, error: kind } = error.params as { tag: string; error: 'tag' | 'mapping' };
      path = path ? `${path}.${tag}` : tag;
      message = kind === 'mapping' ? 'is not a known type' : 'is required and must be a string';
    }
    const field = `${prefix}${path}` || part || 'body';
    const constraint = error.keyword === 'discriminator' ? (message.startsWith('is not') ? 'enum' : 'required') : blank ? 'minLength' : error.keyword;
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

const OPTIONAL_BODY_MARK = 'x-corridor-optional-body';

/**
 * For the OpenAPI document (a swagger `transform` step): marks the schema of a route that takes
 * `optionalBody`. @fastify/swagger makes every requestBody `required: true`; the mark, copied onto
 * the operation, lets markOptionalBodies say `required: false` where a bare POST is accepted.
 */
export function documentOptionalBody(schema: FastifySchema | undefined, route: RouteOptions): FastifySchema | undefined {
  const takesOptionalBody = [route.preValidation ?? []].flat().includes(optionalBody as never);
  return schema?.body && takesOptionalBody ? ({ ...schema, [OPTIONAL_BODY_MARK]: true } as FastifySchema) : schema;
}

/** For the OpenAPI document (a swagger `transform` step): shows the rule refusingBlanks adds to what a request sends. */
export function documentBlankRule(schema: FastifySchema | undefined): FastifySchema | undefined {
  if (!schema) return schema;
  const documented: Record<string, unknown> = { ...schema };
  for (const part of ['body', 'querystring', 'params', 'headers']) if (documented[part]) documented[part] = refusingBlanks(documented[part]);
  return documented as FastifySchema;
}

/** For the OpenAPI document (swagger `transformObject`): requestBody `required: false` on the marked operations. */
export function markOptionalBodies<T>(document: T): T {
  const paths = (document as { paths?: Record<string, Record<string, any>> }).paths ?? {};
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      if (!operation || typeof operation !== 'object' || !(OPTIONAL_BODY_MARK in operation)) continue;
      delete operation[OPTIONAL_BODY_MARK];
      if (operation.requestBody) operation.requestBody.required = false;
    }
  }
  return document;
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
