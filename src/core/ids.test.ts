import { describe, expect, it } from 'vitest';
import { isIdOf, newId, newReference, uuidv7, uuidv7Floor } from './ids.js';

describe('uuidv7', () => {
  it('is an RFC 9562 version 7 UUID carrying the time', () => {
    const before = Date.now();
    const id = uuidv7();
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // Never earlier than the clock; later only by the few milliseconds a burst may borrow.
    const embedded = parseInt(id.replace(/-/g, '').slice(0, 12), 16);
    expect(embedded).toBeGreaterThanOrEqual(before);
    expect(embedded).toBeLessThanOrEqual(Date.now() + 5);
  });

  it('stays unique and ordered across a burst in one millisecond and many refills of the random pool', () => {
    const ms = Date.now();
    const ids = Array.from({ length: 5000 }, () => uuidv7(ms));
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids.map((id) => id.slice(-12))).size).toBe(ids.length);
  });
});

describe('uuidv7Floor', () => {
  it('sorts after every uuidv7 of an earlier millisecond and not after any of its own', () => {
    const id = uuidv7();
    const ms = parseInt(id.replace(/-/g, '').slice(0, 12), 16);
    expect(uuidv7Floor(ms) <= id).toBe(true);
    expect(id < uuidv7Floor(ms + 1)).toBe(true);
    expect(uuidv7Floor(ms)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-0000-0000-000000000000$/);
  });
});

describe('ids', () => {
  it('are typed and recognized by type', () => {
    const id = newId('Customer');
    expect(id.startsWith('Customer:')).toBe(true);
    expect(isIdOf('Customer', id)).toBe(true);
    expect(isIdOf('Quote', id)).toBe(false);
    expect(isIdOf('Customer', `${id}x`)).toBe(false);
  });
});

describe('references', () => {
  it('are the prefix and 12 Crockford base32 characters, different each time', () => {
    const references = Array.from({ length: 1_000 }, () => newReference());
    for (const reference of references) expect(reference).toMatch(/^CR[0-9A-HJKMNP-TV-Z]{12}$/);
    expect(new Set(references).size).toBe(references.length);
    expect(newReference('RF')).toMatch(/^RF[0-9A-HJKMNP-TV-Z]{12}$/);
  });
});
