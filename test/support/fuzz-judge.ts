// Judging the fuzz test's answers (test/fuzz.test.ts): whether an input breaks its operation's own
// schema (an Ajv independent of the app's), and what is wrong with an answer.
import AjvModule from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Operation } from './fuzz-inputs.js';

const Ajv = (AjvModule as any).default ?? AjvModule;
const addFormats = (addFormatsModule as any).default ?? addFormatsModule;

const ajv = new Ajv({ strict: false, allErrors: false, discriminator: true, validateFormats: true });
addFormats(ajv);
const ajvQuery = new Ajv({ strict: false, coerceTypes: 'array', validateFormats: true });
addFormats(ajvQuery);

/** Whether an operation's schema, in `doc`, takes a body or a query string; undefined: not judged. */
export function schemaJudge(doc: any) {
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

  return { schemaTakesBody, schemaTakesQuery };
}

export interface Answer {
  status: number;
  body: any;
  text: string;
}

export function problemWith(answer: Answer, valid: boolean | undefined): string | undefined {
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
