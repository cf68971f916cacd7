import { describe, expect, it } from 'vitest';
import { generalParser as general, parseTimestamptz } from './timestamps.js';

describe('parseTimestamptz', () => {
  it('is compared with node-postgres\'s parser, not with itself', () => {
    expect(general).not.toBe(parseTimestamptz);
  });

  const samples = [
    '2026-11-22 04:09:38.930123+00',
    '2026-11-22 04:09:38+00',
    '2026-11-22 04:09:38.9+00',
    '2026-11-22 04:09:38.999999+00',
    '2026-01-01 00:00:00.000001+00',
    '2024-02-29 23:59:59.5-03',
    '2026-11-22 04:09:38.12345+05:30',
    '1895-05-01 12:00:00+00:17:30',
    '2026-12-31 23:30:00-11:30',
    '1000-01-01 00:00:00+00',
    '9999-12-31 23:59:59.999999+14',
  ];

  it.each(samples)('reads %s as the general parser does', (text) => {
    const parsed = parseTimestamptz(text);
    expect(parsed).toBeInstanceOf(Date);
    expect((parsed as Date).getTime()).toBe((general(text) as Date).getTime());
  });

  it('applies the offset', () => {
    expect((parseTimestamptz('2026-11-22 10:00:00.25+05:30') as Date).toISOString()).toBe('2026-11-22T04:30:00.250Z');
    expect((parseTimestamptz('2026-11-22 00:00:00-03') as Date).toISOString()).toBe('2026-11-22T03:00:00.000Z');
  });

  it.each(['infinity', '-infinity', '0099-01-01 00:00:00+00', '2000-01-01 00:00:00+00 BC', '12345-01-01 00:00:00+00'])(
    'hands %s to the general parser',
    (text) => {
      expect(parseTimestamptz(text)).toEqual(general(text));
    },
  );
});
