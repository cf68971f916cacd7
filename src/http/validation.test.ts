import { describe, expect, it } from 'vitest';
import type { ErrorObject } from 'ajv';
import { ALL_ERRORS_MAX_VALUES, MAX_FIELD_ERRORS, buildValidator, hasAtMostValues, toFieldErrors } from './validation.js';

type Compiled = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

const compile = (schema: object, httpPart = 'body') => buildValidator()({ schema, httpPart, method: 'POST', url: '/x' } as never) as unknown as Compiled;

const Body = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1 },
    count: { type: 'integer', minimum: 0 },
    kind: { type: 'string', enum: ['A', 'B'] },
    tags: { type: 'array', items: { type: 'string' } },
    note: { type: 'string', default: 'none' },
  },
  required: ['name'],
  additionalProperties: false,
};

const manyUnknownFields = (n: number) => {
  const body: Record<string, unknown> = { name: 'x' };
  for (let i = 1; i <= n; i++) body[`unknown${i}`] = i;
  return body;
};

describe('request validation', () => {
  it('valid input passes in one fail-fast pass, defaults filled', () => {
    const validate = compile(Body);
    const body = { name: 'x', tags: ['a'] };
    expect(validate(body)).toBe(true);
    expect(validate.errors).toBeNull();
    expect(body).toEqual({ name: 'x', tags: ['a'], note: 'none' });
  });

  it('a small invalid body still lists every bad field', () => {
    const validate = compile(Body);
    expect(validate({ name: '', count: -1, kind: 'C', extra: true })).toBe(false);
    expect(toFieldErrors(validate.errors ?? [], 'body')).toEqual([
      { field: 'extra', constraint: 'additionalProperties', message: 'is not a known field' },
      { field: 'name', constraint: 'minLength', message: 'must NOT have fewer than 1 characters' },
      { field: 'count', constraint: 'minimum', message: 'must be >= 0' },
      { field: 'kind', constraint: 'enum', message: 'must be one of A, B' },
    ]);
  });

  it('a body of 80,000 unknown fields is refused on its first error, without listing them all', () => {
    const validate = compile(Body);
    expect(validate(manyUnknownFields(80_000))).toBe(false);
    // allErrors would record 80,000 errors here before toFieldErrors kept 50.
    expect(validate.errors!.length).toBeLessThanOrEqual(3);
    expect(toFieldErrors(validate.errors!, 'body')).toEqual([{ field: 'unknown1', constraint: 'additionalProperties', message: 'is not a known field' }]);
  });

  it('a huge array of bad items is refused on its first bad item', () => {
    const validate = compile(Body);
    expect(validate({ name: 'x', tags: Array.from({ length: 50_000 }, (_, i) => i) })).toBe(false);
    expect(validate.errors!.length).toBeLessThanOrEqual(3);
    expect(toFieldErrors(validate.errors!, 'body')).toEqual([{ field: 'tags.0', constraint: 'type', message: 'must be string' }]);
  });

  it(`lists all errors (up to ${MAX_FIELD_ERRORS}) up to ${ALL_ERRORS_MAX_VALUES} JSON values, the first one past it`, () => {
    // No defaults here: a filled-in default would be one more value.
    const validate = compile({ type: 'object', properties: { name: { type: 'string' } }, additionalProperties: false });
    // The object and `name` are values too: n unknown fields make n + 2 values.
    expect(validate(manyUnknownFields(ALL_ERRORS_MAX_VALUES - 2))).toBe(false);
    expect(toFieldErrors(validate.errors!, 'body')).toHaveLength(MAX_FIELD_ERRORS);
    expect(validate(manyUnknownFields(ALL_ERRORS_MAX_VALUES - 1))).toBe(false);
    expect(toFieldErrors(validate.errors!, 'body')).toHaveLength(1);
  });

  it('coercion and defaults applied by the first pass do not change what the second reports', () => {
    const validate = compile(
      {
        type: 'object',
        properties: {
          limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
          page: { type: 'integer', minimum: 1 },
          active: { type: 'boolean' },
          status: { type: 'array', items: { type: 'string', enum: ['A', 'B'] } },
        },
      },
      'querystring',
    );
    const query: Record<string, unknown> = { page: '2', active: 'maybe', status: 'C' };
    expect(validate(query)).toBe(false);
    expect(toFieldErrors(validate.errors ?? [], 'querystring')).toEqual([
      { field: 'querystring.active', constraint: 'type', message: 'must be boolean' },
      { field: 'querystring.status.0', constraint: 'enum', message: 'must be one of A, B' },
    ]);
    expect(query).toEqual({ page: 2, active: 'maybe', status: ['C'], limit: 20 });

    const good: Record<string, unknown> = { page: '3', status: 'A' };
    expect(validate(good)).toBe(true);
    expect(good).toEqual({ page: 3, status: ['A'], limit: 20 });
    // Plain decimals only, as before.
    expect(validate({ page: '0x10' })).toBe(false);
    expect(toFieldErrors(validate.errors ?? [], 'querystring')).toEqual([{ field: 'querystring.page', constraint: 'type', message: 'must be a decimal number' }]);
  });
});

describe('blank strings', () => {
  it('a string that must not be empty must not be only white space either; patterns, formats and enums decide for themselves', () => {
    const validate = compile({
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1 },
        note: { type: 'string' },
        code: { type: 'string', minLength: 1, pattern: '^ *x$' },
        items: { type: 'array', items: { type: 'string', minLength: 2 } },
      },
      additionalProperties: false,
    });
    expect(validate({ name: ' a ', note: '   ', code: '  x', items: ['  b'] })).toBe(true);
    expect(validate({ name: ' \t\n\u00a0', items: ['ok', '  '] })).toBe(false);
    expect(toFieldErrors(validate.errors ?? [], 'body')).toEqual([
      { field: 'name', constraint: 'minLength', message: 'must not be blank' },
      { field: 'items.1', constraint: 'minLength', message: 'must not be blank' },
    ]);
    expect(validate({ name: '' })).toBe(false);
    expect(toFieldErrors(validate.errors ?? [], 'body')).toEqual([{ field: 'name', constraint: 'minLength', message: 'must NOT have fewer than 1 characters' }]);
  });
});

describe('hasAtMostValues', () => {
  it('counts objects, arrays and scalars once each', () => {
    const data = { a: [1, 2, { b: null }], c: 'x' }; // root, array, 1, 2, object, null, 'x'
    expect(hasAtMostValues(data, 7)).toBe(true);
    expect(hasAtMostValues(data, 6)).toBe(false);
    expect(hasAtMostValues('x', 1)).toBe(true);
    expect(hasAtMostValues(undefined, 1)).toBe(true);
  });

  it('stops walking once the limit is passed', () => {
    const items: unknown[] = new Array(1_000_000).fill(0);
    Object.defineProperty(items, 20_000, {
      get() {
        throw new Error('walked past the limit');
      },
    });
    expect(hasAtMostValues(items, ALL_ERRORS_MAX_VALUES)).toBe(false);
  });
});
