import { describe, expect, it } from 'vitest';
import { csvRecords, csvRecordsOfBytes, CsvSyntaxError, type CsvRecord } from './csv.js';

const parseCsv = (text: string): string[][] => Array.from(csvRecords(text), (record) => record.values);

function syntaxError(text: string): { message: string; line: number } {
  try {
    parseCsv(text);
  } catch (error) {
    if (error instanceof CsvSyntaxError) return { message: error.message, line: error.line };
    throw error;
  }
  throw new Error(`parsed without an error: ${JSON.stringify(text)}`);
}

describe('csvRecords, the whole file', () => {
  it('splits plain fields, keeping empty ones and a trailing empty field', () => {
    expect(parseCsv('a,b,c\n1,,3\n,x,\n')).toEqual([
      ['a', 'b', 'c'],
      ['1', '', '3'],
      ['', 'x', ''],
    ]);
  });

  it('reads quoted fields with commas, line breaks (LF and CRLF) and doubled quotes', () => {
    expect(parseCsv('"a, b","line 1\nline 2","cr\r\nlf","say ""hi""","""","",x\n')).toEqual([
      ['a, b', 'line 1\nline 2', 'cr\r\nlf', 'say "hi"', '"', '', 'x'],
    ]);
  });

  it('takes CRLF, LF and lone CR as line ends, with or without a final one', () => {
    const expected = [
      ['a', 'b'],
      ['1', '2'],
    ];
    expect(parseCsv('a,b\r\n1,2\r\n')).toEqual(expected);
    expect(parseCsv('a,b\r\n1,2')).toEqual(expected);
    expect(parseCsv('a,b\n1,2\n')).toEqual(expected);
    expect(parseCsv('a,b\r1,2')).toEqual(expected);
    expect(parseCsv('a,b\n"1",2')).toEqual(expected);
  });

  it('skips blank lines and a leading byte-order mark (only at the very start)', () => {
    expect(parseCsv('\ufeffa,b\n\n\r\n1,2\n\n')).toEqual([
      ['a', 'b'],
      ['1', '2'],
    ]);
    expect(parseCsv('a\n\ufeffb')).toEqual([['a'], ['\ufeffb']]);
    expect(parseCsv('')).toEqual([]);
    expect(parseCsv('\n\r\n')).toEqual([]);
    expect(parseCsv('a,b\n   \n\t\n1,2')).toEqual([['a', 'b'], ['1', '2']]);
  });

  it('keeps text after a closing quote, and non-ASCII text as it is', () => {
    expect(parseCsv('"a"b,c\n')).toEqual([['ab', 'c']]);
    expect(parseCsv('Zoë,"東京, 日本",🙂\n')).toEqual([['Zoë', '東京, 日本', '🙂']]);
  });

  it('refuses a quote inside an unquoted field and an unclosed quote, with the line', () => {
    expect(syntaxError('a,b\n1,x"y\n')).toEqual({ message: 'a quote may only start a field', line: 2 });
    expect(syntaxError('a,b\n"x"y"\n')).toEqual({ message: 'a quote may only start a field', line: 2 });
    // The line the open quote is on, not the file's end (past its last line when it ends in a line break).
    expect(syntaxError('a\r\n"two\nlines"\r\n3,"open\n')).toEqual({ message: 'a quoted field starting on this line is never closed', line: 4 });
    expect(syntaxError('a\n"open\n\nmore\n')).toEqual({ message: 'a quoted field starting on this line is never closed', line: 2 });
  });
});

describe('csvRecords', () => {
  it("gives each record's `next`: where the line after it starts", () => {
    const text = '\ufeffh1,h2\r\n"a,\r\n""1""",🙂\r\n\r\nb,2\n"c"\rd,"4"';
    const all = [...csvRecords(text)];
    expect(all.map((r) => r.values)).toEqual([['h1', 'h2'], ['a,\r\n"1"', '🙂'], ['b', '2'], ['c'], ['d', '4']]);
    expect(all.map((r) => r.next)).toEqual([text.indexOf('"a,'), text.indexOf('\r\n\r\n') + 2, text.indexOf('"c"'), text.indexOf('d,'), text.length]);
  });
});

/** A file in memory read as the database serves it: `length` bytes from `from`, fewer at the end; the reads are recorded. */
function fileOf(bytes: Buffer) {
  const reads: Array<[number, number]> = [];
  const read = async (from: number, length: number) => {
    reads.push([from, length]);
    return new Uint8Array(bytes.subarray(from, from + length));
  };
  return { read, reads };
}

async function collect(records: AsyncIterable<CsvRecord>): Promise<CsvRecord[]> {
  const all: CsvRecord[] = [];
  for await (const record of records) all.push(record);
  return all;
}

describe('csvRecordsOfBytes', () => {
  // Every boundary a chunk can cut: inside 2-, 3- and 4-byte characters, between CR and LF, inside
  // a doubled quote, inside a quoted field spanning lines, at blank lines, at a byte-order mark,
  // before a U+FEFF that starts a later record (data, not a mark), and a last record without a line end.
  const text = '\ufeffh1,h2\r\n"a,\r\n""1""",🙂\r\n\r\nb,2\n"c"\rZoë,"東京, 日本"\r\n\ufeffx,"""",\n\n"q ""uote""\nd",4\rlast,"🙂é"';
  const bytes = Buffer.from(text, 'utf8');
  const expected = [...csvRecords(text)].map((r) => ({ values: r.values, next: Buffer.byteLength(text.slice(0, r.next), 'utf8') }));

  it('reads the records csvRecords reads, with byte offsets, whatever the chunk size', async () => {
    expect(expected.map((r) => r.values)).toEqual([
      ['h1', 'h2'],
      ['a,\r\n"1"', '🙂'],
      ['b', '2'],
      ['c'],
      ['Zoë', '東京, 日本'],
      ['\ufeffx', '"', ''],
      ['q "uote"\nd', '4'],
      ['last', '🙂é'],
    ]);
    expect(expected.at(-1)!.next).toBe(bytes.length);
    for (let chunk = 1; chunk <= bytes.length + 1; chunk++) {
      expect(await collect(csvRecordsOfBytes(fileOf(bytes).read, 0, chunk)), `chunks of ${chunk} bytes`).toEqual(expected);
    }
  });

  it("resumes at any record's `next` (a byte offset) with exactly the records after it", async () => {
    for (const chunk of [1, 2, 3, 5, 8, 64]) {
      for (const [i, record] of expected.entries()) {
        expect(await collect(csvRecordsOfBytes(fileOf(bytes).read, record.next, chunk)), `from ${record.next}, chunks of ${chunk}`).toEqual(expected.slice(i + 1));
      }
    }
  });

  it('reads the file a chunk at a time, from where it starts, and only as far as the records taken', async () => {
    const rows = Array.from({ length: 200 }, (_, i) => `row-${i},"Zoë 🙂 ""${i}""\r\nline 2"`);
    const big = Buffer.from(['h1,h2', ...rows].join('\r\n') + '\r\n');
    const file = fileOf(big);
    const records = csvRecordsOfBytes(file.read, 0, 100);
    for (let i = 0; i < 11; i++) await records.next(); // the header and ten rows
    await records.return(undefined);
    const tenRows = Buffer.byteLength(['h1,h2', ...rows.slice(0, 10)].join('\r\n') + '\r\n');
    expect(file.reads[0]).toEqual([0, 100]);
    file.reads.forEach(([from], i) => i > 0 && expect(from).toBe(file.reads[i - 1][0] + 100));
    expect(file.reads.at(-1)![0]).toBeLessThan(tenRows + 100);

    const resumed = fileOf(big);
    const rest = await collect(csvRecordsOfBytes(resumed.read, tenRows, 100));
    expect(rest.map((r) => r.values[0])).toEqual(rows.slice(10).map((_, i) => `row-${i + 10}`));
    expect(resumed.reads[0]).toEqual([tenRows, 100]);
  });

  it('reads a record longer than a slice in doubling reads, not one slice at a time', async () => {
    const long = `a,"${'é'.repeat(50_000)}"`;
    const file = fileOf(Buffer.from(`h1,h2\n${long}\nb,c\n`));
    const records = await collect(csvRecordsOfBytes(file.read, 0, 10));
    expect(records.map((r) => r.values[0])).toEqual(['h1', 'a', 'b']);
    expect(records[1].values[1]).toHaveLength(50_000);
    expect(file.reads.length).toBeLessThan(20);
  });

  it('an unclosed quote is a syntax error only at the end of the file', async () => {
    const records = csvRecordsOfBytes(fileOf(Buffer.from('a,b\n"open\nstill open')).read, 0, 3);
    await expect(collect(records)).rejects.toThrow(CsvSyntaxError);
  });
});
