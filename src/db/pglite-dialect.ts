import type { PGlite, Results } from '@electric-sql/pglite';
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import { isStalePlan, plannedPerCall } from './plans.js';

// PGlite's wire-protocol helpers, loaded with PGlite itself (a server on PostgreSQL never loads it).
let pgliteModule: Promise<typeof import('@electric-sql/pglite')> | undefined;
const wire = async () => {
  const { protocol, parse } = await (pgliteModule ??= import('@electric-sql/pglite'));
  return { serialize: protocol.serialize, parse };
};

/**
 * Kysely dialect for PGlite. PGlite is one in-process connection, so the driver hands it out to
 * one holder at a time: a transaction keeps it until commit or rollback, other queries queue.
 */
export class PGliteDialect implements Dialect {
  constructor(private readonly pglite: PGlite) {}
  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PGliteDriver(this.pglite);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
  createIntrospector(db: Kysely<any>) {
    return new PostgresIntrospector(db);
  }
}

class PGliteDriver implements Driver {
  private queue: Promise<void> = Promise.resolve();
  private readonly connection: PGliteConnection;

  constructor(pglite: PGlite) {
    this.connection = new PGliteConnection(pglite);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const previous = this.queue;
    this.queue = previous.then(() => held);
    await previous;
    this.connection.release = release;
    return this.connection;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const level = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : '';
    await connection.executeQuery(CompiledQuery.raw(`begin${level}`));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async savepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`savepoint ${name}`));
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`rollback to savepoint ${name}`));
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`release savepoint ${name}`));
  }

  async releaseConnection(): Promise<void> {
    const release = this.connection.release;
    this.connection.release = undefined;
    // PGlite runs each query synchronously on this thread, and whoever acquires next resumes in
    // a microtask: handing over at once would chain query after query without ever polling the
    // sockets, and under load new connections waited seconds to be read (p99 of 5 s at 50
    // connections). Handing over on the next turn of the event loop lets them in to queue fairly.
    if (release) setImmediate(release);
  }

  async destroy(): Promise<void> {}
}

/** Distinct statement texts kept prepared; past this, new texts go through `PGlite.query` (parsed and planned each time). */
const MAX_PREPARED = 500;

interface Prepared {
  name: string;
  /** Type oids of the parameters, to serialize each value the way `PGlite.query` would. */
  paramTypes: number[];
}


class PGliteConnection implements DatabaseConnection {
  release?: () => void;
  private readonly prepared = new Map<string, Prepared>();
  private preparedCount = 0;

  constructor(private readonly pglite: PGlite) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    if (compiled.parameters.length === 0) {
      // Unparameterized text may hold several statements (migrations); exec runs them all.
      const results = await this.pglite.exec(compiled.sql);
      const last = results[results.length - 1];
      return { rows: (last?.rows ?? []) as R[], numAffectedRows: BigInt(last?.affectedRows ?? 0) };
    }
    const params = compiled.parameters as unknown[];
    const full = plannedPerCall(compiled.sql) || (this.prepared.size >= MAX_PREPARED && !this.prepared.has(compiled.sql));
    // `query` takes PGlite's lock itself, so it must not run inside `runExclusive`.
    const result = full ? await this.pglite.query<R>(compiled.sql, params) : await this.pglite.runExclusive(() => this.runPrepared<R>(compiled.sql, params));
    return { rows: result.rows, numAffectedRows: BigInt(result.affectedRows ?? 0) };
  }

  /**
   * Runs a parameterized statement as a named prepared statement: parsed and planned once, then
   * bound and executed in one exchange (`PGlite.query` parses, plans and describes every call, in
   * six exchanges).
   */
  private async runPrepared<R>(text: string, params: unknown[], retried = false): Promise<Results<R>> {
    const statement = this.prepared.get(text) ?? (await this.prepare(text));
    const { serialize, parse } = await wire();
    const values = params.map((value, i) => {
      if (value === null || value === undefined) return null;
      const serializer = this.pglite.serializers[statement.paramTypes[i]];
      return serializer ? serializer(value) : String(value);
    });
    try {
      const { messages } = await this.pglite.execProtocol(
        Buffer.concat([serialize.bind({ statement: statement.name, values }), serialize.describe({ type: 'P' }), serialize.execute({}), serialize.sync()]),
      );
      return parse.parseResults(messages, this.pglite.parsers)[0] as Results<R>;
    } catch (error) {
      if (retried || !isStalePlan(error)) throw error;
      await this.forget(text, statement);
      return this.runPrepared(text, params, true);
    }
  }

  private async prepare(text: string): Promise<Prepared> {
    const { serialize, parse } = await wire();
    const name = `corridor_${++this.preparedCount}`;
    const { messages } = await this.pglite.execProtocol(Buffer.concat([serialize.parse({ name, text }), serialize.describe({ type: 'S', name }), serialize.sync()]));
    const statement = { name, paramTypes: parse.parseDescribeStatementResults(messages) };
    this.prepared.set(text, statement);
    return statement;
  }

  private async forget(text: string, statement: Prepared): Promise<void> {
    const { serialize } = await wire();
    this.prepared.delete(text);
    await this.pglite.execProtocol(Buffer.concat([serialize.close({ type: 'S', name: statement.name }), serialize.sync()]));
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('PGlite dialect does not stream');
  }
}
