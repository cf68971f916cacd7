import pg from 'pg';

/** node-postgres's own `timestamptz` parser, captured before `database.ts` replaces it. */
export const generalParser = pg.types.getTypeParser(1184) as (text: string) => Date | number | null;

/** The non-negative integer in `text[from, from + length)`, or -1 if any character is not a digit. */
function digitsAt(text: string, from: number, length: number): number {
  let value = 0;
  for (let i = from; i < from + length; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/**
 * Parses PostgreSQL's `timestamptz` text (`2026-11-22 04:09:38.930123+00`, DateStyle ISO) by
 * position instead of by regular expressions; anything else (BC years, infinity, years outside
 * 1000–9999) goes to node-postgres's own parser. Every row of every list carries two of these,
 * and the general parser was ~5% of a list request's CPU. Both read only DateStyle ISO, which
 * every connection pins (`PINNED_SETTINGS` in database.ts): under another DateStyle set on the
 * database or role (`SQL, DMY`), they would read every timestamp as null.
 */
export function parseTimestamptz(text: string): Date | number | null {
  const year = text.charCodeAt(4) === 45 && text.charCodeAt(10) === 32 ? digitsAt(text, 0, 4) : -1;
  if (year < 1000) return generalParser(text);
  let at = 19;
  let ms = 0;
  if (text.charCodeAt(at) === 46) {
    // Whole milliseconds exactly; Date drops the microseconds the way the general parser does.
    let scale = 100;
    for (at++; at < text.length; at++, scale /= 10) {
      const digit = text.charCodeAt(at) - 48;
      if (digit < 0 || digit > 9) break;
      ms += digit * scale;
    }
  }
  const sign = text.charCodeAt(at);
  if (sign !== 43 && sign !== 45) return generalParser(text);
  const offsetParts = [digitsAt(text, at + 1, 2), 0, 0];
  let end = at + 3;
  for (let part = 1; part < 3 && text.charCodeAt(end) === 58; part++, end += 3) offsetParts[part] = digitsAt(text, end + 1, 2);
  const fields = [digitsAt(text, 5, 2), digitsAt(text, 8, 2), digitsAt(text, 11, 2), digitsAt(text, 14, 2), digitsAt(text, 17, 2)];
  if (end !== text.length || fields.some((f) => f < 0) || offsetParts.some((f) => f < 0)) return generalParser(text);
  const [month, day, hour, minute, second] = fields;
  const offsetMs = (offsetParts[0] * 3600 + offsetParts[1] * 60 + offsetParts[2]) * 1000 * (sign === 43 ? 1 : -1);
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second, ms) - offsetMs);
}
