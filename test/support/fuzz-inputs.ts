// The fuzz test's inputs (test/fuzz.test.ts): for each operation of the app's OpenAPI document,
// bad and edge bodies, query strings, multipart forms and path parameters, each a valid input
// with one thing changed.
import { API_PREFIX } from '../../src/http/app.js';
import { getAt, omit, withValue, type SchemaWalker } from './fuzz-schemas.js';
import { CURSORS, LONG, nested, QUERY_JUNK, STRINGS, swapCase } from './fuzz-values.js';

export interface Operation {
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

/** Every operation of the document (GET, POST, PUT, PATCH, DELETE), its path without the API prefix. */
export function operations(doc: any, schemas: SchemaWalker): Operation[] {
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

export interface Input {
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

export function encodeQuery(query: Record<string, string>): string {
  return Object.entries(query)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&');
}

/** The body, query and form inputs of operations whose schemas `schemas` reads. */
export function inputsFrom(schemas: SchemaWalker) {
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

  return { bodyInputs, queryInputs, formInputs };
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

export function pathInputs(op: Operation, path: string, body: unknown): Input[] {
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
