/** Values and randomness for test/fuzz.test.ts: a seeded PRNG and the junk each kind of field, query and header gets. */

export const SEED = Number(process.env.FUZZ_SEED ?? 20251013);

// ---------------------------------------------------------------------------------------------
// Deterministic randomness

export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

export function shuffled<T>(items: T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** A seed per operation, so that adding an operation does not change the inputs of the others. */
export function seedOf(key: string): number {
  let h = SEED >>> 0;
  for (const c of key) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
  return h;
}

export function swapCase(text: string): string {
  return [...text].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join('');
}

export function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { a: value };
  return value;
}

export const LONG = 'a'.repeat(10_000);
export const STRINGS: Array<[string, unknown]> = [
  ['empty string', ''],
  ['blank', '   '],
  ['10k chars', LONG],
  ['10k emoji', '😀'.repeat(5_000)],
  ['unicode', 'Zoë 名前 😀 ‮rtl'],
  ['NUL', 'a\u0000b'],
  ['control chars', '\u0001\u0007\b\t\n\r\u001b\u007f'],
  ['lone surrogate', '\ud800'],
  ['quotes and SQL', `'"; drop table customers; --`],
  ['percent escapes', '%00%ff%'],
  ['path', '../../etc/passwd'],
  ['id-like', 'Customer:00000000-0000-0000-0000-000000000000'],
];
export const NUMBERS: Array<[string, unknown]> = [
  ['0', 0],
  ['-1', -1],
  ['1.5', 1.5],
  ['1e308', 1e308],
  ['-1e308', -1e308],
  ['2^53', 2 ** 53],
  ['2^63', 2 ** 63],
  ['9000000000000001', 9_000_000_000_000_001],
  ['9000000000000000', 9_000_000_000_000_000],
  ['-0', -0],
  ['1e-7', 1e-7],
];
export const DATE_TIMES = ['0001-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '9999-12-31T23:59:59-01:00', '0001-01-01T00:00:00+01:00', '0000-01-01T00:00:00Z', '2024-02-30T00:00:00Z', '2024-01-01T24:00:00Z', '2016-12-31T23:59:60Z', '2024-01-01', 'yesterday', '+275760-09-13T00:00:00Z', '1970-01-01T00:00:00.123456789Z'];
export const DATES = ['0001-01-01', '9999-12-31', '0000-01-01', '2024-02-30', '1990-13-01', '1990-1-1', '2024-01-01T00:00:00Z'];

export const b64 = (text: string) => Buffer.from(text).toString('base64url');
export const CURSORS = [
  '%00',
  'AAAA////',
  '!!!!',
  '====',
  b64('null'),
  b64('[]'),
  b64('{}'),
  b64('[1e308,"x"]'),
  b64('[-62135596800001,"Customer:x"]'),
  b64('[253402300800000,"Customer:x"]'),
  b64('[0,"\\u0000"]'),
  b64(`[0,"${'a'.repeat(300)}"]`),
  b64('[0,1]'),
  b64('[1.5,"Customer:x"]'),
  b64('["2024-01-01","Customer:x"]'),
  b64('[0,"Customer:\'); drop table x; --"]'),
  'a'.repeat(512),
  'a'.repeat(10_000),
];

/** Raw (already encoded) junk for any query parameter. */
export const QUERY_JUNK: Array<[string, string]> = [
  ['empty', ''],
  ['-1', '-1'],
  ['0', '0'],
  ['1.5', '1.5'],
  ['1e308', '1e308'],
  ['2^63', '9223372036854775808'],
  ['huge', '99999999999999999999999999'],
  ['NaN', 'NaN'],
  ['Infinity', 'Infinity'],
  ['true', 'true'],
  ['%00', '%00'],
  ['broken escape', '%E0%A4%A'],
  ['bare %', '%'],
  ['%ff', '%ff'],
  ['10k chars', LONG],
  ['emoji', encodeURIComponent('😀 名前')],
  ['control chars', encodeURIComponent('\u0001\u001b\u007f')],
  ['lone surrogate escape', '%ED%A0%80'],
  ['brackets', '[]'],
  ['base64 garbage', 'AAAA////'],
  ['date 0000', '0000-01-01T00:00:00Z'],
  ['date 0001', '0001-01-01T00:00:00Z'],
  ['date 9999', '9999-12-31T23:59:59Z'],
  ['date 9999 -01:00', encodeURIComponent('9999-12-31T23:59:59-01:00')],
  ['date malformed', '2024-13-45T99:99:99Z'],
  ['date only', '2024-01-01'],
  ['date +275760', encodeURIComponent('+275760-09-13T00:00:00Z')],
  ['wrong case', 'usd'],
];

/** Header values (what an HTTP client can put in a header: latin1). */
export const HEADER_JUNK: Array<[string, string]> = [
  ['blank', ' '],
  ['255 chars', 'k'.repeat(255)],
  ['256 chars', 'k'.repeat(256)],
  ['10k chars', LONG],
  ['latin1', 'clé-ÿ'],
  ['UTF-8 bytes of an emoji', Buffer.from('😀 名前').toString('latin1')],
  ['control char', 'a\u0001b'],
  ['quotes', `'"; --`],
];
