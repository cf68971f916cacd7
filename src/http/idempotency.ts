import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, RouteOptions } from 'fastify';
import { Type } from 'typebox';
import { errors } from './common-schemas.js';
import type { Clock } from '../core/clock.js';
import type { ServiceContext } from '../core/context.js';
import { invalidInput, ServiceError } from '../core/errors.js';
import { sha256Hex } from '../core/secrets.js';
import type { Database, Trx } from '../db/database.js';
import { literalLimit, toJson } from '../db/database.js';
import { deleteInBatches } from '../db/prune.js';
import { writeAsOne } from '../db/one-statement.js';
import { createWriteBatcher } from '../db/write-batcher.js';
import type { Json } from '../db/schema.js';
import type { Platform } from '../modules/platform/service.js';
import { transact } from '../db/transact.js';

declare module '../db/schema.js' {
  interface DB {
    idempotency_keys: {
      scope: string;
      key: string;
      request_hash: string;
      status_code: number | null;
      response: Json<unknown> | null;
      locked_until: Date | null;
      created_at: import('kysely').Generated<Date>;
    };
  }
}

interface IdempotencyClaim {
  scope: string;
  key: string;
  /** Set once the response has been stored (inside the work's transaction or after sending). */
  recorded: boolean;
  successStatus: number;
  /**
   * The lease this request holds (its `locked_until`) until a response is recorded: the record is
   * written only while the lease is still this one, so a request that outlived it, and whose key a
   * retry took over, cannot commit its work as well.
   */
  lease: Date | null;
  /** What of the response the record keeps (all of it unless the route says otherwise). */
  kept: (body: unknown) => unknown;
}

/**
 * For a route whose answer carries a one-time secret (an API token's secret, an agent's device
 * code), which Corridor otherwise keeps only hashed: what the idempotency record keeps instead of
 * the answer, and how a replay answers from that. The secret then exists only in the first answer.
 */
export interface OneTimeSecret<Stored = any> {
  kept: (body: any) => Stored;
  /** Default: the kept part as it is. */
  replay?: (request: FastifyRequest, kept: Stored) => Promise<unknown>;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    oneTimeSecret?: OneTimeSecret;
  }
  interface FastifyRequest {
    idempotency?: IdempotencyClaim;
    /** The service context of this request: tenant, agent and transaction runner. */
    ctx: ServiceContext<Platform>;
  }
}

/** A request that is still running holds its key this long; after a crash the key frees itself. */
const LEASE_MS = 60_000;
/** Keys are kept at least this long (ARCHITECTURE: ≥ 24 h). */
export const IDEMPOTENCY_RETENTION_MS = 48 * 3600_000;

function successStatusOf(request: FastifyRequest): number {
  const responses = (request.routeOptions.schema?.response ?? {}) as Record<string, unknown>;
  const codes = Object.keys(responses).map(Number).filter((c) => c >= 200 && c < 300);
  return codes.length > 0 ? Math.min(...codes) : 200;
}

/** JSON with every object's keys sorted: a client that serializes its retry in another key order sends the same request. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

function decodedPath(url: string): string {
  const path = url.split('?')[0];
  try {
    return decodeURIComponent(path);
  } catch {
    return path; // not valid percent-encoding: compared as sent
  }
}

/**
 * What makes two requests the same: method, path (percent-decoded: `Quote%3A…` is `Quote:…`), JSON
 * body (whatever its key order), and an uploaded file's bytes.
 */
function requestHash(request: FastifyRequest): string {
  const file = request.upload ? `\n${request.upload.sha256}` : '';
  return sha256Hex(`${request.method}\n${decodedPath(request.url)}\n${canonicalJson(request.body ?? null)}${file}`);
}

/** The hash before keys were sorted and paths decoded, which keys recorded by an earlier version hold (kept 48 h). */
function legacyRequestHash(request: FastifyRequest): string {
  const file = request.upload ? `\n${request.upload.sha256}` : '';
  return sha256Hex(`${request.method}\n${request.url.split('?')[0]}\n${JSON.stringify(request.body ?? null)}${file}`);
}

function leaseLost(): ServiceError {
  return new ServiceError('IDEMPOTENCY_KEY_IN_USE', 'this request outlived its Idempotency-Key lease and a retry took the key over: nothing was done here');
}

/**
 * Idempotency-Key on POST: the first request claims the key; its response is stored in the same
 * transaction as its work (through `ctx.tx`), so a retry gets exactly that response
 * (`Idempotent-Replayed: true`). A different request under the same key gets 422, a retry while
 * the first still runs gets 409. A request that fails changed nothing, so its key is released;
 * so is one answered 202 (a signed-retry challenge: the signed retry is the real request).
 */
export function installIdempotency(app: FastifyInstance, deps: { database: Database; clock: Clock }): void {
  const { db } = deps.database;
  const batcher = createWriteBatcher(deps.database);

  function responseUpdate(ex: Trx | typeof db, claim: IdempotencyClaim, status: number, body: unknown) {
    const update = ex
      .updateTable('idempotency_keys')
      .set({ status_code: status, response: toJson(claim.kept(body) ?? null), locked_until: null })
      .where('scope', '=', claim.scope)
      .where('key', '=', claim.key);
    return claim.lease ? update.where('locked_until', '=', claim.lease) : update;
  }

  /** Records the response; refuses (rolling back the work it commits with) when the lease was taken over. */
  async function storeResponse(ex: Trx | typeof db, claim: IdempotencyClaim, status: number, body: unknown) {
    const { numUpdatedRows } = await responseUpdate(ex, claim, status, body).executeTakeFirst();
    if (numUpdatedRows === 0n) throw leaseLost();
    claim.recorded = true;
    claim.lease = null;
  }

  app.addHook('preHandler', (request, _reply, done) => {
    request.ctx = {
      platform: request.platform,
      agentId: request.principal?.kind === 'agent' ? request.principal.agentId : undefined,
      tx: async (work, options) => {
        const claim = request.idempotency;
        const recordedBefore = claim?.recorded ?? false;
        let result;
        try {
          result = await transact(db, async (trx) => {
            const done = await work(trx);
            if (claim && !claim.recorded) await storeResponse(trx, claim, claim.successStatus, done);
            return done;
          });
        } catch (error) {
          // The record rolled back with the work: `recordHook` releases the key, not the lease.
          if (claim) claim.recorded = recordedBefore;
          throw error;
        }
        // The final answer is recorded over it when the request answers (`recordHook`).
        if (options?.provisional && claim) claim.recorded = false;
        return result;
      },
      // Without a transaction: the writes and the idempotency record are one statement, shared
      // with other requests' writes of the same kind when `batch` allows (the key's row is this
      // request's own).
      commitWrites: async (writes, result, { finish, batch, provisional } = {}) => {
        const claim = request.idempotency;
        const all = claim && !claim.recorded ? [...writes, responseUpdate(db, claim, claim.successStatus, result)] : writes;
        await (batch ? batcher.write(batch, all, finish) : writeAsOne(db, all, finish));
        if (claim) {
          // One statement cannot refuse its other writes when the lease was lost (a request that
          // commits this way takes milliseconds, not the minute of a lease).
          if (!claim.recorded) claim.lease = null;
          claim.recorded = !provisional;
        }
        return result;
      },
    };
    done();
  });

  // Only POST routes take a key: the claim and the recording are their own hooks, so other
  // requests pay for neither.
  app.addHook('onRoute', (route) => {
    if (![route.method].flat().includes('POST')) return;
    route.preHandler = [...[route.preHandler ?? []].flat(), claimHook];
    route.onSend = [...[route.onSend ?? []].flat(), recordHook];
  });

  async function claimHook(request: FastifyRequest, reply: FastifyReply) {
    const scope = request.principal?.kind === 'agent' ? request.principal.agentId : request.platform?.id;
    const key = request.headers['idempotency-key'];
    if (key === undefined || !scope) return;
    if (typeof key !== 'string' || key.length === 0 || key.length > 255) {
      throw invalidInput('Idempotency-Key', 'Idempotency-Key must be 1-255 characters', 'maxLength');
    }
    await claimKey(request, reply, scope, key);
  }

  async function claimKey(request: FastifyRequest, reply: FastifyReply, scope: string, key: string) {
    const hash = requestHash(request);
    const nowMs = deps.clock.realNowMs();
    const lease = new Date(nowMs + LEASE_MS);
    const inserted = await db
      .insertInto('idempotency_keys')
      .values({ scope, key, request_hash: hash, status_code: null, response: null, locked_until: lease })
      .onConflict((oc) => oc.columns(['scope', 'key']).doNothing())
      .returning('key')
      .executeTakeFirst();
    const secret = request.routeOptions.config.oneTimeSecret;
    const claim: IdempotencyClaim = { scope, key, recorded: false, successStatus: successStatusOf(request), kept: secret?.kept ?? ((body) => body), lease };
    if (inserted) {
      request.idempotency = claim;
      return;
    }
    const existing = await db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('scope', '=', scope)
      .where('key', '=', key)
      .executeTakeFirst();
    if (!existing) return claimKey(request, reply, scope, key); // released between our two statements
    if (existing.request_hash !== hash && existing.request_hash !== legacyRequestHash(request)) {
      throw new ServiceError('IDEMPOTENCY_KEY_MISMATCH', 'this Idempotency-Key was used for a different request');
    }
    if (existing.status_code !== null) {
      const answer = secret?.replay ? await secret.replay(request, existing.response) : existing.response;
      reply.header('idempotent-replayed', 'true');
      return reply.code(existing.status_code).send(answer);
    }
    // Still in flight, unless its lease ran out (the process handling it died): then take it over.
    const taken = await db
      .updateTable('idempotency_keys')
      .set({ locked_until: lease })
      .where('scope', '=', scope)
      .where('key', '=', key)
      .where('status_code', 'is', null)
      .where('locked_until', '<', new Date(nowMs))
      .returning('key')
      .executeTakeFirst();
    if (!taken) throw new ServiceError('IDEMPOTENCY_KEY_IN_USE', 'a request with this Idempotency-Key is still in progress');
    request.idempotency = claim;
  }

  /**
   * Records the answer of a request whose work did not record it, or releases the key of one that
   * failed. The answer is already decided: if the database fails here, the client still gets it
   * (a thrown error would replace it with a 500), and the key stays leased until LEASE_MS passes.
   */
  async function recordHook(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
    const claim = request.idempotency;
    if (!claim || claim.recorded) return payload;
    try {
      // 202 is a signed-retry challenge, not the outcome: the signed retry reuses the same key.
      if (reply.statusCode >= 200 && reply.statusCode < 300 && reply.statusCode !== 202) {
        const body = typeof payload === 'string' && payload.length > 0 ? JSON.parse(payload) : null;
        await storeResponse(db, claim, reply.statusCode, body);
      } else {
        claim.recorded = true;
        // Only under this request's own lease: a retry that took the key over keeps it.
        await db
          .deleteFrom('idempotency_keys')
          .where('scope', '=', claim.scope)
          .where('key', '=', claim.key)
          .where('status_code', 'is', null)
          .$if(claim.lease !== null, (q) => q.where('locked_until', '=', claim.lease!))
          .execute();
      }
    } catch (error) {
      request.log.error({ err: error, idempotencyKey: claim.key }, 'the Idempotency-Key record could not be written; the key stays leased until its lease ends');
    }
    return payload;
  }
}

/**
 * Ends the lease of every key still in flight, so that a retry takes it over at once rather than
 * after LEASE_MS. Only for a database no other process can be using (see `releaseDeadLeases`).
 */
export async function releaseInFlightKeys(database: Database): Promise<void> {
  await database.db.updateTable('idempotency_keys').set({ locked_until: new Date(0) }).where('status_code', 'is', null).execute();
}

/** Deletes idempotency records past their retention (`created_at` is the database's real time), in batches. */
export async function pruneIdempotencyKeys(database: Database, nowMs: number, batch?: number): Promise<number> {
  const before = new Date(nowMs - IDEMPOTENCY_RETENTION_MS);
  return deleteInBatches(async (limit) => {
    const result = await database.db
      .deleteFrom('idempotency_keys')
      .where((eb) =>
        eb(
          eb.refTuple('scope', 'key'),
          'in',
          eb
            .selectFrom('idempotency_keys')
            .select(['scope', 'key'])
            .where('created_at', '<', before)
            .orderBy('created_at')
            .limit(literalLimit(limit))
            .$asTuple('scope', 'key'),
        ),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows ?? 0);
  }, batch);
}

const IdempotencyKeyHeader = Type.Optional(
  Type.String({
    minLength: 1,
    maxLength: 255,
    description: 'Makes the request safe to retry: a repeat with the same key and body gets the first response again (`Idempotent-Replayed: true`).',
  }),
);

/**
 * For the OpenAPI document: every authenticated POST takes `Idempotency-Key`. The preHandler above
 * reads it for all of them, so no route declares it; this adds it to each one's documented headers.
 */
export function documentIdempotencyKey(schema: FastifySchema | undefined, route: RouteOptions): FastifySchema | undefined {
  const post = [route.method].flat().includes('POST');
  const open = (schema as { security?: unknown[] } | undefined)?.security?.length === 0;
  if (!schema || !post || open) return schema;
  const headers = (schema.headers ?? { type: 'object', properties: {} }) as { properties?: Record<string, unknown> };
  // The key's own answers: the same key still running (409), or sent with another request (422).
  const { 409: inUse, 422: mismatch } = errors(409, 422);
  const response = schema.response ? { 409: inUse, 422: mismatch, ...(schema.response as object) } : undefined;
  return { ...schema, headers: { ...headers, properties: { ...headers.properties, 'idempotency-key': IdempotencyKeyHeader } }, ...(response && { response }) };
}
