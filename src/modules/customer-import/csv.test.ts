import { describe, expect, it } from 'vitest';
import { csvRecords, CsvSyntaxError } from './csv.js';

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
  });

  it('keeps text after a closing quote, and non-ASCII text as it is', () => {
    expect(parseCsv('"a"b,c\n')).toEqual([['ab', 'c']]);
    expect(parseCsv('Zoë,"東京, 日本",🙂\n')).toEqual([['Zoë', '東京, 日本', '🙂']]);
  });

  it('refuses a quote inside an unquoted field and an unclosed quote, with the line', () => {
    expect(syntaxError('a,b\n1,x"y\n')).toEqual({ message: 'a quote may only start a field', line: 2 });
    expect(syntaxError('a,b\n"x"y"\n')).toEqual({ message: 'a quote may only start a field', line: 2 });
    expect(syntaxError('a\r\n"two\nlines"\r\n3,"open\n')).toEqual({ message: 'a quoted field is not closed', line: 5 });
  });
});

describe('csvRecords', () => {
  it("resumes at any record's `next` with exactly the records after it", () => {
    const text = '\ufeffh1,h2\r\n"a,\r\n""1""",🙂\r\n\r\nb,2\n"c"\rd,"4"';
    const all = [...csvRecords(text)];
    expect(all.map((r) => r.values)).toEqual([['h1', 'h2'], ['a,\r\n"1"', '🙂'], ['b', '2'], ['c'], ['d', '4']]);
    all.forEach((record, i) => {
      expect([...csvRecords(text, record.next)].map((r) => r.values)).toEqual(all.slice(i + 1).map((r) => r.values));
    });
    expect(all.at(-1)!.next).toBe(text.length);
  });
});
