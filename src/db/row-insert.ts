import { isOperationNodeSource, RawNode, ValueNode, type InsertObject, type OperationNode, type OperationNodeSource } from 'kysely';
import type { DB } from './schema.js';

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * The insert of one row, as a clause to run (`writeAsOne`) or to batch: the statement Kysely's
 * `insertInto(table).values(row)` compiles to (columns in the row's key order, undefined ones left
 * to their defaults, SQL expressions written in place), built directly as the node Kysely
 * compiles. On the hot inserts (quotes, transactions) the query builder's parsing and frozen nodes
 * cost about four times as much server CPU as this (docs/benchmarks.md).
 */
export function rowInsert<T extends keyof DB & string>(table: T, row: InsertObject<DB, T>): OperationNodeSource {
  const columns: string[] = [];
  const values: OperationNode[] = [];
  for (const [column, value] of Object.entries(row)) {
    if (value === undefined) continue;
    columns.push(column);
    values.push(isOperationNodeSource(value) ? value.toOperationNode() : ValueNode.create(value));
  }
  const node = RawNode.create(fragmentsOf(table, columns), values);
  return { toOperationNode: () => node };
}

/** The statement's text around its values, kept per table for the columns last seen (usually the only ones). */
const lastFragments = new Map<string, { columns: string[]; fragments: string[] }>();

function fragmentsOf(table: string, columns: string[]): string[] {
  const last = lastFragments.get(table);
  if (last && last.columns.length === columns.length && last.columns.every((c, i) => c === columns[i])) return last.fragments;
  if (columns.length === 0) throw new Error(`an insert into ${table} needs at least one value`);
  const head = `insert into ${quoted(table)} (${columns.map(quoted).join(', ')}) values (`;
  const fragments = [head, ...Array<string>(columns.length - 1).fill(', '), ')'];
  lastFragments.set(table, { columns, fragments });
  return fragments;
}
