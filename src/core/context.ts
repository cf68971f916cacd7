import type { Trx } from '../db/database.js';
import type { RawBuilder } from 'kysely';
import { writeAsOne, type Clause } from '../db/one-statement.js';
import type { Batching } from '../db/write-batcher.js';
import type { ClockSubject } from './clock.js';

/** The tenant a request or job acts for, as services see it. */
export interface PlatformRef extends ClockSubject {
  id: string;
  mode: 'SANDBOX' | 'PRODUCTION';
}

/**
 * How a commit relates to the request's answer. `provisional`: the result stored for an
 * Idempotency-Key replay stands only until the request's final answer replaces it, for a route
 * that does more after its commit, such as calling the rail (a crash in between leaves the
 * provisional answer, never a key free to redo the committed work).
 */
export interface CommitOptions {
  provisional?: boolean;
}

/** Runs work in one database transaction. */
export type TxRunner = <T>(work: (trx: Trx) => Promise<T>, options?: CommitOptions) => Promise<T>;

/** `commitWrites`' options: `finish` and `batch` as `writeAsOne` and `createWriteBatcher` take them. */
export interface WriteOptions extends CommitOptions {
  finish?: RawBuilder<unknown>;
  batch?: Batching;
}

/**
 * What a service call needs beyond its input: the tenant, and the transaction runner. When the
 * request carries an Idempotency-Key, `tx` also stores the response inside the same transaction,
 * so the work and its idempotency record commit (or vanish) together.
 */
export interface ServiceContext<P extends PlatformRef = PlatformRef> {
  platform: P;
  tx: TxRunner;
  /** Set when an agent (Bearer token) initiated the call. */
  agentId?: string;
  /**
   * Commits writes that need no reads in between, with whatever `tx` would attach to them, in
   * as few round trips as the context allows; resolves to `result`. With `batch`, they may be
   * committed together with concurrent writes of that kind (`createWriteBatcher` says how and
   * which writes may). Optional: `commitWrites` falls back to `tx`.
   */
  commitWrites?: <T>(writes: Clause[], result: T, options?: WriteOptions) => Promise<T>;
}

/**
 * Commits `writes` (one statement, see `writeAsOne` for `finish`) the cheapest way `ctx` offers;
 * resolves to `result`.
 */
export function commitWrites<T>(ctx: ServiceContext, writes: Clause[], result: T, options: WriteOptions = {}): Promise<T> {
  if (ctx.commitWrites) return ctx.commitWrites(writes, result, options);
  return ctx.tx(async (trx) => {
    await writeAsOne(trx, writes, options.finish);
    return result;
  }, options);
}
