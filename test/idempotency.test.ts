// Idempotency-Key on POST routes: replays, mismatches, scope, concurrency, and records that
// cannot be written (src/http/idempotency.ts).
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuth, startTestApp, type TestApp, type TestPlatform } from './support/app.js';
import { sha256Hex } from '../src/core/secrets.js';
import { leaseTakenOver } from './support/faults.js';
import { fund, newCustomer, usdAccount } from './support/quotes.js';

let t: TestApp;
let p: TestPlatform;

beforeAll(async () => {
  t = await startTestApp();
  p = await t.createPlatform();
});
afterAll(() => t.close());

describe('Idempotency-Key', () => {
  const body = { name: 'idem', permissions: ['VIEW'] };

  it('replays the first response for the same key and request', async () => {
    const first = await p.api.post('/tokens', body, { 'idempotency-key': 'k-replay' });
    expect(first.status).toBe(201);
    const second = await p.api.post('/tokens', body, { 'idempotency-key': 'k-replay' });
    expect(second.status).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    // All of it but the token's secret, which no idempotency record keeps (tokens.test.ts).
    const { clientSecret, ...token } = first.body;
    expect(clientSecret).toBeTruthy();
    expect(second.body).toEqual(token);
    const count = await t.corridor.database.db
      .selectFrom('api_tokens')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('name', '=', 'idem')
      .where('platform_id', '=', p.platform.id)
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(1);
  });

  it('refuses the same key with a different request (422)', async () => {
    await p.api.post('/tokens', body, { 'idempotency-key': 'k-mismatch' });
    const other = await p.api.post('/tokens', { ...body, name: 'different' }, { 'idempotency-key': 'k-mismatch' });
    expect(other.status).toBe(422);
    expect(other.body.code).toBe('IDEMPOTENCY_KEY_MISMATCH');
  });

  it('is the same request whatever the order of the body\'s keys and the percent-encoding of the path', async () => {
    const key = { 'idempotency-key': 'k-canonical' };
    expect((await p.api.post('/tokens', { name: 'idem-order', permissions: ['VIEW'] }, key)).status).toBe(201);
    const reordered = await p.api.post('/tokens', { permissions: ['VIEW'], name: 'idem-order' }, key);
    expect(reordered.status).toBe(201);
    expect(reordered.headers['idempotent-replayed']).toBe('true');

    const account = (await newCustomer(p, 'Percent Path')).accounts.USD;
    const fundKey = { 'idempotency-key': 'k-encoded-path' };
    expect((await p.api.post(`/sandbox/internal-accounts/${account}/fund`, { amount: 100 }, fundKey)).status).toBe(200);
    const encoded = await p.api.post(`/sandbox/internal-accounts/${encodeURIComponent(account)}/fund`, { amount: 100 }, fundKey);
    expect(encoded.status).toBe(200);
    expect(encoded.headers['idempotent-replayed']).toBe('true');
    expect(encoded.body.balance.amount).toBe(100);
  });

  it('replays a key an earlier version recorded, whose hash took the body as sent', async () => {
    const body = { permissions: ['VIEW'], name: 'idem-legacy' };
    const first = await p.api.post('/tokens', body, { 'idempotency-key': 'k-legacy' });
    expect(first.status).toBe(201);
    const legacyHash = sha256Hex(`POST\n/2025-10-13/tokens\n${JSON.stringify(body)}`);
    await t.corridor.database.db.updateTable('idempotency_keys').set({ request_hash: legacyHash }).where('scope', '=', p.platform.id).where('key', '=', 'k-legacy').execute();
    const replay = await p.api.post('/tokens', body, { 'idempotency-key': 'k-legacy' });
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.id).toBe(first.body.id);
  });

  it('a request that outlived its lease, its key taken over by a retry, commits nothing', async () => {
    const { db } = t.corridor.database;
    const restore = await leaseTakenOver(db, 'k-taken-over');
    try {
      const res = await p.api.post('/tokens', { name: 'taken-over', permissions: ['VIEW'] }, { 'idempotency-key': 'k-taken-over' });
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('IDEMPOTENCY_KEY_IN_USE');
    } finally {
      await restore();
    }
    const tokens = await db.selectFrom('api_tokens').select('id').where('name', '=', 'taken-over').where('platform_id', '=', p.platform.id).execute();
    expect(tokens).toEqual([]);
    // The key is still the retry's: leased, not released by the request that lost it.
    const key = await db.selectFrom('idempotency_keys').select(['status_code', 'locked_until']).where('scope', '=', p.platform.id).where('key', '=', 'k-taken-over').executeTakeFirstOrThrow();
    expect(key.status_code).toBeNull();
    expect(new Date(key.locked_until!).getTime()).toBeGreaterThan(Date.now());
  });

  it('a replay answers the first response\'s bytes, nested objects included', async () => {
    const customer = (await p.api.post('/customers', { customerType: 'INDIVIDUAL', fullName: 'Ada Replay' })).body;
    const account = {
      customerId: customer.id,
      currency: 'USD',
      accountInfo: { accountType: 'USD_ACCOUNT', accountNumber: '7777012345001', routingNumber: '021000021', beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Ada Lovelace' } },
    };
    const first = await t.corridor.app.inject({ method: 'POST', url: '/2025-10-13/customers/external-accounts', payload: account, headers: { authorization: basicAuth(p.credentials), 'idempotency-key': 'k-bytes' } });
    const replay = await t.corridor.app.inject({ method: 'POST', url: '/2025-10-13/customers/external-accounts', payload: account, headers: { authorization: basicAuth(p.credentials), 'idempotency-key': 'k-bytes' } });
    expect(first.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
  });

  it('a record that cannot be written after the work leaves the answer as it was', async () => {
    const { db } = t.corridor.database;
    await sql`create function corridor_test_refuse_key() returns trigger language plpgsql as $$
      begin
        -- Not the provisional answer a clock advance stores with its move: the final one over it.
        if old.key like 'refuse-record-%' and (tg_op = 'DELETE' or old.status_code is not null) then raise exception 'injected failure'; end if;
        return case when tg_op = 'DELETE' then old else new end;
      end $$`.execute(db);
    await sql`create trigger corridor_test_refuse_key before update or delete on idempotency_keys for each row execute function corridor_test_refuse_key()`.execute(db);
    try {
      // The clock advance records its final answer after its work; a refusal releases the key after it.
      const advanced = await p.api.post('/sandbox/clock/advance', { seconds: 1 }, { 'idempotency-key': 'refuse-record-ok' });
      expect(advanced.status).toBe(200);
      expect(advanced.body.offsetSeconds).toBeGreaterThan(0);
      // The provisional answer stands: a replay does not move the clock again.
      const replay = await p.api.post('/sandbox/clock/advance', { seconds: 1 }, { 'idempotency-key': 'refuse-record-ok' });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toMatchObject({ offsetSeconds: advanced.body.offsetSeconds, jobsRun: 0 });
      const production = await t.createPlatform({ mode: 'PRODUCTION' });
      const refused = await production.api.post('/sandbox/clock/advance', { seconds: 1 }, { 'idempotency-key': 'refuse-record-403' });
      expect(refused.status).toBe(403);
      expect(refused.body.code).toBe('SANDBOX_ONLY');
    } finally {
      await sql`drop trigger corridor_test_refuse_key on idempotency_keys`.execute(db);
      await sql`drop function corridor_test_refuse_key()`.execute(db);
    }
  });

  it('a transaction that fails after storing its record releases the key at once', async () => {
    const { db } = t.corridor.database;
    // Fails at COMMIT, after the work and its record were written in the transaction.
    await sql`create function corridor_test_fail_commit() returns trigger language plpgsql as $$
      begin raise exception 'injected commit failure'; end $$`.execute(db);
    await sql`create constraint trigger corridor_test_fail_commit after update on idempotency_keys deferrable initially deferred
      for each row when (new.key = 'fail-at-commit') execute function corridor_test_fail_commit()`.execute(db);
    try {
      expect((await p.api.post('/tokens', body, { 'idempotency-key': 'fail-at-commit' })).status).toBe(500);
    } finally {
      await sql`drop trigger corridor_test_fail_commit on idempotency_keys`.execute(db);
      await sql`drop function corridor_test_fail_commit()`.execute(db);
    }
    const retry = await p.api.post('/tokens', body, { 'idempotency-key': 'fail-at-commit' });
    expect(retry.status, JSON.stringify(retry.body)).toBe(201);
  });

  it('keys are scoped to the platform', async () => {
    const q = await t.createPlatform();
    const mine = await p.api.post('/tokens', body, { 'idempotency-key': 'k-shared' });
    const theirs = await q.api.post('/tokens', body, { 'idempotency-key': 'k-shared' });
    expect(theirs.status).toBe(201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.body.id).not.toBe(mine.body.id);
  });

  it('concurrent duplicates create one object; the others replay or get 409', async () => {
    const responses = await Promise.all(
      Array.from({ length: 8 }, () => p.api.post('/tokens', { name: 'race', permissions: ['VIEW'] }, { 'idempotency-key': 'k-race' })),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    const created = new Set(responses.filter((r) => r.status === 201).map((r) => r.body.id));
    expect(created.size).toBe(1);
    for (const r of responses.filter((r) => r.status === 409)) expect(r.body.code).toBe('IDEMPOTENCY_KEY_IN_USE');
  });

  it('a request refused after claiming its key releases it: the same request succeeds once its cause is fixed', async () => {
    const customer = await newCustomer(p);
    const destination = await usdAccount(p, customer.id);
    const transfer = { source: { accountId: customer.accounts.USD }, destination: { accountId: destination }, amount: 1_000 };
    const headers = { 'idempotency-key': 'k-fail' };
    // A valid body refused by the work itself (after the key was claimed), not by validation.
    const refused = await p.api.post('/transfer-out', transfer, headers);
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body.code).toBe('INSUFFICIENT_FUNDS');
    const kept = await t.corridor.database.db.selectFrom('idempotency_keys').select('key').where('key', '=', 'k-fail').execute();
    expect(kept).toEqual([]);
    await fund(p, customer.accounts.USD, 1_000);
    const retried = await p.api.post('/transfer-out', transfer, headers);
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    const replayed = await p.api.post('/transfer-out', transfer, headers);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.body.id).toBe(retried.body.id);
  });

  it('rejects an over-long key', async () => {
    const response = await p.api.post('/tokens', body, { 'idempotency-key': 'k'.repeat(300) });
    expect(response.status).toBe(400);
    expect(response.body.details.errors[0].field).toBe('Idempotency-Key');
  });
});
