/**
 * The typed table map. Each module declares its own tables by augmenting this interface in its
 * repository (`declare module '../../db/schema.js' { interface DB { ... } }`), so a table's type
 * lives beside the only code allowed to query it.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface DB {}

import type { ColumnType } from 'kysely';

/** A json/jsonb column: read as T, written as an already-serialized string (see toJson). */
export type Json<T> = ColumnType<T, string, string>;
/** A column with a database default: optional on insert. */
export type WithDefault<T> = ColumnType<T, T | undefined, T>;
