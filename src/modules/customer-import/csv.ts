/** Thrown for text that is not well-formed CSV; `line` is 1-based. */
export class CsvSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
  }
}

/** One record and the offset (in `text`, UTF-16 code units) where the next one starts. */
export interface CsvRecord {
  values: string[];
  next: number;
}

const QUOTE = 0x22;
const COMMA = 0x2c;
const LF = 0x0a;
const CR = 0x0d;
const BOM = 0xfeff;

/** Where a field ended: at `end` (a comma, a line end, or the end of the text), `lines` line breaks in. */
interface Field {
  value: string;
  end: number;
  lines: number;
}

function newlinesIn(text: string, from: number, to: number): number {
  let count = 0;
  for (let i = text.indexOf('\n', from); i !== -1 && i < to; i = text.indexOf('\n', i + 1)) count++;
  return count;
}

/** A field in double quotes, from its opening quote to just after its closing one. */
function readQuoted(text: string, open: number, line: number): Field {
  let value = '';
  let from = open + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote === -1) throw new CsvSyntaxError('a quoted field is not closed', line + newlinesIn(text, open, text.length));
    value += text.slice(from, quote);
    if (text.charCodeAt(quote + 1) !== QUOTE) return { value, end: quote + 1, lines: newlinesIn(text, open, quote) };
    value += '"';
    from = quote + 2;
  }
}

/**
 * One field starting at `start`. Fields are slices of the text, never built a character at a
 * time: each `+=` of one character makes a string of its own, which cost 25× the file's size.
 */
function readField(text: string, start: number, line: number): Field {
  const quoted = text.charCodeAt(start) === QUOTE ? readQuoted(text, start, line) : { value: '', end: start, lines: 0 };
  let end = quoted.end;
  for (; end < text.length; end++) {
    const c = text.charCodeAt(end);
    if (c === COMMA || c === LF || c === CR) break;
    if (c === QUOTE) throw new CsvSyntaxError('a quote may only start a field', line + quoted.lines);
  }
  const value = end === quoted.end ? quoted.value : quoted.value + text.slice(quoted.end, end);
  return { value, end, lines: quoted.lines };
}

/** The record starting at `start` (possibly blank), and the offset after its line end. */
function readRecord(text: string, start: number, line: number): CsvRecord & { lines: number } {
  const values: string[] = [];
  let lines = 0;
  let at = start;
  for (;;) {
    const field = readField(text, at, line + lines);
    values.push(field.value);
    lines += field.lines;
    const c = text.charCodeAt(field.end);
    if (c === COMMA) {
      at = field.end + 1;
      continue;
    }
    if (Number.isNaN(c)) return { values, next: text.length, lines };
    const next = c === CR && text.charCodeAt(field.end + 1) === LF ? field.end + 2 : field.end + 1;
    return { values, next, lines: lines + 1 };
  }
}

/**
 * Reads RFC 4180 CSV one record at a time: comma-separated, fields optionally in double quotes
 * (a quote inside is doubled; quoted fields may span lines), CRLF, LF or CR line ends, a leading
 * byte-order mark ignored, blank lines skipped. `from` is a record's start (a `next` of an
 * earlier read), so a reader can resume without reading the records before it again; error lines
 * count from there.
 */
export function* csvRecords(text: string, from = 0): Generator<CsvRecord> {
  let at = from === 0 && text.charCodeAt(0) === BOM ? 1 : from;
  let line = 1;
  while (at < text.length) {
    const record = readRecord(text, at, line);
    at = record.next;
    line += record.lines;
    if (record.values.length > 1 || record.values[0] !== '') yield { values: record.values, next: record.next };
  }
}
