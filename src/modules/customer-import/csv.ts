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
    if (quote === -1) throw new CsvSyntaxError('a quoted field starting on this line is never closed', line);
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

/** A line with nothing on it but spaces or tabs (one value, blank). */
function isBlank(values: string[]): boolean {
  return values.length === 1 && values[0].trim() === '';
}

/** The first record at or after `start` that is not a blank line, or undefined when the text ends first. */
function nonBlankRecord(text: string, start: number): CsvRecord | undefined {
  let at = start;
  while (at < text.length) {
    const record = readRecord(text, at, 1);
    if (!isBlank(record.values)) return { values: record.values, next: record.next };
    at = record.next;
  }
  return undefined;
}

/**
 * Reads RFC 4180 CSV one record at a time: comma-separated, fields optionally in double quotes
 * (a quote inside is doubled; quoted fields may span lines), CRLF, LF or CR line ends, a leading
 * byte-order mark ignored, blank lines (empty, or only spaces and tabs) skipped. Each record's
 * `next` is where the line after it starts (`csvRecordsOfBytes` resumes from such offsets, in bytes).
 */
export function* csvRecords(text: string): Generator<CsvRecord> {
  let at = text.charCodeAt(0) === BOM ? 1 : 0;
  let line = 1;
  while (at < text.length) {
    const record = readRecord(text, at, line);
    at = record.next;
    line += record.lines;
    if (!isBlank(record.values)) yield { values: record.values, next: record.next };
  }
}

/** Reads up to `length` bytes of a file from byte `from` (0-based); fewer, or none, at its end. */
export type ReadBytes = (from: number, length: number) => Promise<Uint8Array>;

/** Bytes of `text[from, to)` in UTF-8 (the text is well-formed: a surrogate is half of a pair). */
function utf8Length(text: string, from: number, to: number): number {
  let bytes = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      bytes += 4; // with the low surrogate after it
      i++;
    } else bytes += 3;
  }
  return bytes;
}

const UTF8_BOM = [0xef, 0xbb, 0xbf];

/**
 * `csvRecords` over a UTF-8 file that is read a chunk of `chunkBytes` at a time, from byte `from`
 * (0, or a record's start: a `next` of an earlier read), so that a reader holds the records it is
 * at and no more of the file. `next` is a byte offset into the file. A record may span chunks: a
 * record is taken only once the text after it has been read (a CR at a chunk's end may be half of
 * a CRLF, a quote half of a doubled one), or the file has ended; a character may span them too
 * (the decoder keeps an incomplete one for the next chunk). The file was checked whole when it
 * was accepted, so a syntax error before the file's end only means the record goes on. Reads
 * are `chunkBytes`, doubled for each further read that a single record still needs.
 */
export async function* csvRecordsOfBytes(read: ReadBytes, from = 0, chunkBytes = 64 * 1024): AsyncGenerator<CsvRecord> {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  let fetched = from; // bytes [from, fetched) have been read
  let ended = false;
  let text = ''; // decoded: the record being read and what was read after it
  let pos = 0; // where the next record starts in `text`
  let posByte = from; // ...and in the file
  // A record longer than what the last read brought is parsed again from its start after each
  // read: the reads double while it lasts, so that a huge record costs linear time, not quadratic.
  let size = chunkBytes;
  let taken = true; // a record was taken since the last read
  const more = async () => {
    size = taken ? chunkBytes : size * 2;
    taken = false;
    const chunk = await read(fetched, size);
    fetched += chunk.length;
    ended = chunk.length < size;
    text += decoder.decode(chunk, { stream: !ended });
  };

  if (from === 0) {
    // A byte-order mark is no part of the first record, and its 3 bytes count in the offsets.
    while (!ended && fetched < UTF8_BOM.length) await more();
    if (text.charCodeAt(0) === BOM) {
      pos = 1;
      posByte = UTF8_BOM.length;
    }
  }
  for (;;) {
    let record: CsvRecord | undefined;
    try {
      record = nonBlankRecord(text, pos);
    } catch (error) {
      if (!(error instanceof CsvSyntaxError) || ended) throw error;
      record = undefined; // a quoted field goes on past what was read
    }
    if (record && (record.next < text.length || ended)) {
      posByte += utf8Length(text, pos, record.next);
      pos = record.next;
      taken = true;
      yield { values: record.values, next: posByte };
      continue;
    }
    if (ended) return; // blank lines at most were left
    // Keep only the record being read, and read on.
    text = text.slice(pos);
    pos = 0;
    await more();
  }
}
