// The fuzz test's view of the app's OpenAPI schemas: which branch of a oneOf a value is in, a
// value that fits a schema, and the bad and edge values to put in its place (test/fuzz.test.ts).
import { DATE_TIMES, DATES, LONG, nested, NUMBERS, STRINGS, swapCase } from './fuzz-values.js';

/** Schema helpers over one OpenAPI document, whose `$ref`s resolve in `doc.components.schemas`. */
export function schemaWalker(doc: any) {
  function deref(schema: any): any {
    let s = schema;
    while (s?.$ref) s = doc.components.schemas[s.$ref.split('/').pop()];
    return s;
  }

  /** The branches of a schema (oneOf / anyOf), or the schema itself. */
  function branches(schema: any): any[] {
    const s = deref(schema);
    const list = s?.oneOf ?? s?.anyOf;
    return list ? list.map(deref) : [s];
  }

  /** The branch of a oneOf the value is in (by its discriminator, else the first that fits its keys). */
  function branchOf(schema: any, value: any): any {
    const s = deref(schema);
    const list = branches(s);
    if (list.length === 1) return list[0];
    const property = s.discriminator?.propertyName;
    if (property && value && typeof value === 'object') {
      const hit = list.find((b) => deref(b.properties?.[property])?.enum?.includes(value[property]) || deref(b.properties?.[property])?.const === value[property]);
      if (hit) return hit;
    }
    if (value === null) return list.find((b) => typeOf(b) === 'null') ?? list[0];
    return list.find((b) => typeOf(b) === jsonType(value)) ?? list[0];
  }

  function typeOf(schema: any): string | undefined {
    const s = deref(schema);
    if (!s) return undefined;
    if (Array.isArray(s.type)) return s.type.find((x: string) => x !== 'null');
    if (s.type) return s.type;
    if (s.properties) return 'object';
    if (s.enum) return typeof s.enum[0];
    if (s.const !== undefined) return typeof s.const;
    return undefined;
  }

  /** A value that fits the schema, built from its const, enum, default, format and bounds. */
  function sample(schema: any, depth = 0): unknown {
    const s = branches(schema)[0];
    if (!s || depth > 8) return undefined;
    if (s.const !== undefined) return s.const;
    if (s.enum) return s.enum[0];
    if (s.default !== undefined) return s.default;
    switch (typeOf(s)) {
      case 'object': {
        const out: Record<string, unknown> = {};
        for (const name of s.required ?? []) out[name] = sample(s.properties?.[name], depth + 1);
        return out;
      }
      case 'array':
        return Array.from({ length: s.minItems ?? 0 }, () => sample(s.items, depth + 1));
      case 'integer':
      case 'number':
        return Math.max(s.minimum ?? 1, 1);
      case 'boolean':
        return true;
      case 'string': {
        if (s.format === 'date-time') return '2030-01-01T00:00:00Z';
        if (s.format === 'date') return '1990-01-15';
        if (s.format === 'email') return 'fuzz@example.com';
        if (s.format === 'uri') return 'https://example.com/fuzz';
        const candidates = ['USD', 'US', 'fuzz', 'x', '1', 'abc123'];
        if (s.pattern) return candidates.find((c) => new RegExp(s.pattern, 'u').test(c)) ?? 'x';
        return 'x'.repeat(Math.max(s.minLength ?? 1, 1));
      }
      default:
        return 'x';
    }
  }

  /** Replacements for a value at a place whose schema is `schema` (the branch `value` is in). */
  function replacements(schema: any, value: unknown): Array<[string, unknown]> {
    const s = branchOf(schema, value);
    const type = typeOf(s);
    const out: Array<[string, unknown]> = [
      ['null', null],
      ['true', true],
      ['array', []],
      ['array of the value', [value ?? 'x']],
      ['object', {}],
      ['deeply nested', nested(40)],
    ];
    if (type !== 'string') out.push(['"x"', 'x'], ...STRINGS.slice(0, 6));
    if (type !== 'integer' && type !== 'number') out.push(['1', 1], ['-1', -1], ['1e308', 1e308]);
    if (type === 'string') {
      out.push(...STRINGS, ['0', 0], ['1.5', 1.5]);
      if (s?.enum) {
        for (const e of s.enum.slice(0, 2)) out.push([`wrong case ${e}`, swapCase(String(e))], [`padded ${e}`, ` ${e} `]);
      }
      if (s?.format === 'date-time') out.push(...DATE_TIMES.map((d): [string, unknown] => [`date-time ${d}`, d]));
      if (s?.format === 'date') out.push(...DATES.map((d): [string, unknown] => [`date ${d}`, d]));
      if (s?.format === 'email') out.push(['email 10k', `${'a'.repeat(64)}@${'b'.repeat(9_000)}.com`], ['email NUL', 'a\u0000@example.com'], ['email unicode', 'zoë@exämple.com']);
      if (s?.maxLength) out.push([`maxLength ${s.maxLength}`, 'a'.repeat(s.maxLength)], [`maxLength ${s.maxLength} emoji`, '😀'.repeat(s.maxLength)]);
      if (typeof value === 'string' && /^\d+$/.test(value)) out.push(['as number', Number(value)]);
    }
    if (type === 'integer' || type === 'number') {
      out.push(...NUMBERS, ['as string', String(value ?? 1)], ['"1e3"', '1e3']);
      if (s?.maximum !== undefined) out.push([`maximum ${s.maximum}`, s.maximum], [`maximum+1`, s.maximum + 1]);
    }
    if (type === 'boolean') out.push(['"true"', 'true'], ['0', 0]);
    if (type === 'array') {
      const item = sample(s.items);
      out.push(['200 items', Array.from({ length: 200 }, () => (Array.isArray(value) && value.length ? value[0] : item))], ['item null', [null]], ['item junk', [{ junk: LONG }]]);
      if (Array.isArray(value) && value.length) out.push(['duplicated items', [...value, ...value]]);
    }
    if (type === 'object') {
      const b = s;
      for (const name of b.required ?? []) {
        if (value && typeof value === 'object' && name in (value as object)) {
          const { [name]: _, ...rest } = value as Record<string, unknown>;
          out.push([`without ${name}`, rest]);
        }
      }
      out.push(['unknown field', { ...(value as object), fuzzUnknown: 1 }]);
      // A discriminated oneOf: each discriminator value next to the fields of the value's own branch.
      const parent = deref(schema);
      const property = parent?.discriminator?.propertyName;
      if (property && value && typeof value === 'object') {
        for (const other of branches(parent)) {
          const tag = deref(other.properties?.[property])?.enum?.[0] ?? deref(other.properties?.[property])?.const;
          if (tag === undefined || tag === (value as any)[property]) continue;
          out.push([`${property} ${tag} with the other fields`, { ...(value as object), [property]: tag }]);
          out.push([`${property} ${tag} with its required fields as junk`, { ...(sample(other) as object), ...Object.fromEntries((other.required ?? []).filter((n: string) => n !== property).map((n: string) => [n, LONG])) }]);
        }
      }
    }
    return out;
  }

  /** Every place in a body: [path, value at it, schema at it]. Fields the schema has but the body lacks are places too. */
  function places(schema: any, value: unknown, path: Array<string | number> = [], out: Array<{ path: Array<string | number>; value: unknown; schema: any }> = []) {
    if (path.length > 6) return out;
    const s = branchOf(schema, value);
    if (path.length > 0) out.push({ path, value, schema });
    if (typeOf(s) === 'object' && s.properties) {
      for (const [name, sub] of Object.entries<any>(s.properties)) {
        const present = value && typeof value === 'object' && !Array.isArray(value) && name in value;
        places(sub, present ? (value as any)[name] : sample(sub), [...path, name], out);
      }
    } else if (typeOf(s) === 'array' && s.items) {
      places(s.items, Array.isArray(value) && value.length > 0 ? value[0] : sample(s.items), [...path, 0], out);
    }
    return out;
  }

  return { deref, branches, branchOf, typeOf, sample, replacements, places };
}

export type SchemaWalker = ReturnType<typeof schemaWalker>;

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

export function withValue(body: unknown, path: Array<string | number>, value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  const base: any = Array.isArray(body) ? [...body] : body && typeof body === 'object' ? { ...body } : typeof head === 'number' ? [] : {};
  base[head!] = withValue(base[head!], rest, value);
  return base;
}

export function getAt(value: unknown, path: Array<string | number>): unknown {
  return path.reduce<any>((v, k) => (v == null ? undefined : v[k]), value);
}

export function omit(value: unknown, key: string | number): unknown {
  if (Array.isArray(value)) return value.filter((_, i) => i !== key);
  if (!value || typeof value !== 'object') return value;
  const { [key]: _, ...rest } = value as Record<string, unknown>;
  return rest;
}
