import { RawNode, ValueNode, type Insertable, type OperationNodeSource } from 'kysely';
import type { DB } from './schema.js';

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * The insert of one row, as a clause to run (`writeAsOne`) or to batch: the statement Kysely's
 * `insertInto(table).values(row)` compiles to, columns in the row's key order and undefined ones
 * left to their defaults, built directly as the node Kysely compiles. On the hot inserts (quotes,
 * transactions) the query builder's parsing and frozen nodes cost about five times as much server
 * CPU as this (docs/benchmarks.md).
 */
export function rowInsert<T extends keyof DB & string>(table: T, row: Insertable<DB[T]>): OperationNodeSource {
  const columns: string[] = [];
  const values: ValueNode[] = [];
  for (const [column, value] of Object.entries(row)) {
    if (value === undefined) continue;
    columns.push(quoted(column));
    values.push(ValueNode.create(value));
  }
  if (values.length === 0) throw new Error(`an insert into ${table} needs at least one value`);
  const fragments = [`insert into ${quoted(table)} (${columns.join(', ')}) values (`, ...Array<string>(values.length - 1).fill(', '), ')'];
  const node = RawNode.create(fragments, values);
  return { toOperationNode: () => node };
}
