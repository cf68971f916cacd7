import type { FastifySchema, RouteOptions } from 'fastify';
import { Type, type TSchema } from 'typebox';

/** The error envelope every non-2xx response carries. */
export const ErrorEnvelope = Type.Object(
  {
    status: Type.Integer({ description: 'HTTP status code, repeated in the body.' }),
    code: Type.String({ description: 'Stable machine-readable error code.' }),
    message: Type.String({ description: 'Human-readable explanation.' }),
    reason: Type.Optional(Type.String({ description: 'Sandbox authentication failures: which check failed.' })),
    details: Type.Optional(
      Type.Object(
        {
          errors: Type.Optional(
            Type.Array(
              Type.Object({
                field: Type.String({ description: 'Dotted path of the offending field, e.g. `address.postalCode`.' }),
                constraint: Type.String({ description: 'The rule it broke, e.g. `required`, `format`, `maximum`.' }),
                message: Type.String({ description: 'What is wrong with it.' }),
              }),
              { description: 'One entry per invalid field.' },
            ),
          ),
        },
        { additionalProperties: true, description: 'Extra machine-readable context.' },
      ),
    ),
  },
  { title: 'Error' },
);

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid input',
  401: 'Missing or invalid credentials',
  403: 'Not allowed',
  404: 'Not found',
  409: 'Conflict with the current state',
  410: 'Gone',
  412: 'The counterparty does not support this UMA version',
  413: 'Request body too large',
  415: 'Request body of a media type the operation does not take',
  422: 'Idempotency key reused with a different request',
  424: 'A counterparty failed',
  429: 'Too many requests',
  500: 'Unexpected server error',
  501: 'Not implemented',
  503: 'The database is unreachable or busy, or the server is shutting down; retry',
};

/** Error responses for a route's schema, documented with the shared envelope. */
export function errors(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const status of [...new Set([400, 401, 500, ...statuses])]) {
    out[status] = Type.Ref('ErrorEnvelope', { description: STATUS_TEXT[status] ?? 'Error' }) as unknown as TSchema;
  }
  return out;
}

// Validated by `isStorableDateTime` (src/http/validation.ts): RFC 3339 and a storable instant.
export const DateTime = (description: string) => Type.String({ format: 'date-time', description });

export const CurrencyCode = (description = 'ISO 4217 currency code (or crypto ticker such as BTC, USDC).') =>
  Type.String({ pattern: '^[A-Z]{3,5}$', description });

export const Amount = (description: string) =>
  Type.Integer({ minimum: 0, maximum: 9_000_000_000_000_000, description });

export const CurrencySchema = Type.Object(
  {
    code: Type.String({ description: 'ISO 4217 code, or the ticker of a crypto asset.' }),
    name: Type.String({ description: 'Full name of the currency.' }),
    symbol: Type.String({ description: 'Display symbol.' }),
    decimals: Type.Integer({ minimum: 0, description: 'Digits after the decimal point in the smallest unit.' }),
  },
  { title: 'Currency', description: 'A currency: ISO 4217 code (or crypto ticker), name, symbol and decimals.' },
);

export const CurrencyAmount = Type.Object(
  {
    amount: Type.Integer({ description: 'Amount in the smallest unit of the currency (cents for USD).' }),
    currency: CurrencySchema,
  },
  { title: 'CurrencyAmount', description: 'An amount in the smallest unit of its currency, with the currency.' },
);

export const IdParam = (name: string, description: string) =>
  Type.Object({ [name]: Type.String({ minLength: 1, maxLength: 200, description }) });

export const NoContent = Type.Null({ description: 'No content.' });

/** A string enum that validates and documents as `{type: string, enum: [...]}`. */
export function StringEnum<const T extends readonly string[]>(values: T, options: { description: string; default?: T[number] }) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/**
 * A tagged union (`oneOf` + OpenAPI `discriminator`): validation errors come only from the
 * branch the tag selects, and the docs show the mapping.
 */
export function Discriminated<T extends TSchema[]>(propertyName: string, variants: [...T], options: { description: string }) {
  return Type.Unsafe<import('typebox').Static<T[number]>>({
    type: 'object',
    oneOf: variants,
    discriminator: { propertyName },
    ...options,
  });
}

/**
 * For the OpenAPI document: answers every operation of the API can give whatever it declares:
 * 503 when the database is out of reach or the server shuts down, and 413 and 415 for a body
 * too large or of another media type on operations that may carry one.
 */
export function documentCommonErrors(schema: FastifySchema | undefined, route: RouteOptions, prefix: string): FastifySchema | undefined {
  if (!schema?.response || !route.url.startsWith(`${prefix}/`)) return schema;
  const takesBody = [route.method].flat().some((method) => method !== 'GET' && method !== 'HEAD');
  const common = errors(413, 415, 503);
  const added = takesBody ? { 413: common[413], 415: common[415], 503: common[503] } : { 503: common[503] };
  return { ...schema, response: { ...added, ...(schema.response as object) } };
}
