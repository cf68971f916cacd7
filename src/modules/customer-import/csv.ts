/** Thrown for text that is not well-formed CSV; `line` is 1-based. */
export class CsvSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
  }
}

/**
 * Parses RFC 4180 CSV: comma-separated, fields optionally in double quotes (a quote inside is
 * doubled; quoted fields may span lines), CRLF or LF line ends, a leading byte-order mark ignored.
 * Blank lines are skipped. Returns the records as arrays of strings.
 */
export function parseCsv(text: string): string[][] {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let i = 0;
  const endRecord = () => {
    record.push(field);
    if (record.length > 1 || record[0] !== '') records.push(record);
    record = [];
    field = '';
  };
  while (i < source.length) {
    const c = source[i];
    if (quoted) {
      if (c === '"' && source[i + 1] === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (c === '"') quoted = false;
      else {
        if (c === '\n') line++;
        field += c;
      }
      i++;
      continue;
    }
    if (c === '"') {
      if (field !== '') throw new CsvSyntaxError('a quote may only start a field', line);
      quoted = true;
    } else if (c === ',') {
      record.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      endRecord();
      if (c === '\r' && source[i + 1] === '\n') i++;
      line++;
    } else field += c;
    i++;
  }
  if (quoted) throw new CsvSyntaxError('a quoted field is not closed', line);
  if (field !== '' || record.length > 0) endRecord();
  return records;
}
