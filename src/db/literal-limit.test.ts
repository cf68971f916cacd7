import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import { describe, expect, it } from 'vitest';
import { literalLimit, type DB } from './database.js';

const db = new Kysely<DB>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (k) => new PostgresIntrospector(k),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

describe('literalLimit', () => {
  it('writes the limit into the statement text instead of a parameter', () => {
    const compiled = db.selectFrom('customers').select('id').where('platform_id', '=', 'P').limit(literalLimit(21)).compile();
    expect(compiled.sql).toMatch(/ limit 21$/);
    expect(compiled.parameters).toEqual(['P']);
  });

  it('refuses anything but a non-negative integer', () => {
    for (const bad of [1.5, -1, Number.NaN, 2 ** 60]) expect(() => literalLimit(bad)).toThrow('invalid LIMIT');
  });
});
