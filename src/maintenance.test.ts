import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../test/support/app.js';
import { recordingDeletes } from '../test/support/db.js';
import { advance, fund, newCustomer, type TestCustomer } from '../test/support/quotes.js';
import { emailSession, newWallet, walletPlatform } from '../test/support/wallets.js';
import { newId, uuidv7 } from './core/ids.js';
import { IDEMPOTENCY_RETENTION_MS, pruneIdempotencyKeys } from './http/idempotency.js';
import { FIRST_MAINTENANCE_DELAY_MS } from './corridor.js';
import { createMaintenance } from './maintenance.js';
import { pruneInvoices } from './modules/uma/repository.js';
import { generateClientKeyPair } from './wallet-client/index.js';

const MINUTE = 60_000;
const HOUR = 3600_000;
const DAY = 86_400_000;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

/** One maintenance pass as a server whose wall clock reads `realNowMs` would run it. */
function maintainAt(realNowMs: number): Promise<void> {
  const clock = { realNowMs: () => realNowMs, now: (s: { clockOffsetMs: number } | null | undefined) => new Date(realNowMs + (s?.clockOffsetMs ?? 0)) };
  return createMaintenance({ config: t.corridor.config, database: t.corridor.database, clock, log: pino({ level: 'silent' }) }).run();
}

describe('idempotency keys', () => {
  it('are deleted in batches once past retention; younger ones stay', async () => {
    const { database } = t.corridor;
    const scope = `prune-test-${Date.now()}`;
    const row = (key: string, ageMs: number) => ({ scope, key, request_hash: 'x', status_code: 200, created_at: new Date(Date.now() - ageMs) });
    const old = Array.from({ length: 7 }, (_, i) => row(`old-${i}`, IDEMPOTENCY_RETENTION_MS + HOUR));
    await database.db.insertInto('idempotency_keys').values([...old, row('young', IDEMPOTENCY_RETENTION_MS - HOUR)]).execute();
    const recording = recordingDeletes(database.db);
    expect(await pruneIdempotencyKeys({ ...database, db: recording.db }, Date.now(), 3)).toBeGreaterThanOrEqual(7);
    expect(recording.deleted.every((n) => n <= 3)).toBe(true);
    const left = await database.db.selectFrom('idempotency_keys').select('key').where('scope', '=', scope).execute();
    expect(left.map((r) => r.key)).toEqual(['young']);
  });
});

describe('embedded wallets', () => {
  it('challenges go a day after they were issued and sessions a day after they ended, in real time, on a sandbox a year ahead too', async () => {
    const { db } = t.corridor.database;
    const tp = await walletPlatform(t, 'SANDBOX');
    const advanced = await advance(tp, 366 * 24 * 3600);
    expect(advanced.status).toBe(200);
    const platformNow = () => new Date(Date.now() + advanced.body.offsetSeconds * 1000);
    const open = await emailSession(t, await newWallet(tp));
    const ended = await emailSession(t, await newWallet(tp));
    const wallet = await newWallet(tp);
    const opened = await emailSession(t, wallet);
    await db.updateTable('wallet_sessions').set({ revoked_at: sql`created_at` }).where('id', '=', ended.id).execute();
    const retry = await wallet.api.post(`/internal-accounts/${wallet.accountId}/export`, { clientPublicKey: generateClientKeyPair().publicKey });
    expect(retry.status, JSON.stringify(retry.body)).toBe(202);
    await db
      .insertInto('wallet_auth_challenges')
      .values({
        id: uuidv7(), // as a passkey challenge's Request-Id
        platform_id: tp.platform.id,
        credential_id: open.credentialId,
        kind: 'PASSKEY',
        challenge: 'c',
        client_public_key: null,
        otp_hash: null,
        attempts: 0,
        expires_at: new Date(platformNow().getTime() + 5 * MINUTE),
        consumed_at: null,
        created_at: platformNow(),
      })
      .execute();
    const credentials = [open.credentialId, ended.credentialId, opened.credentialId];
    const left = async () => ({
      challenges: (await db.selectFrom('wallet_auth_challenges').select('kind').where('credential_id', 'in', credentials).orderBy('kind').execute()).map((r) => r.kind),
      retries: (await db.selectFrom('signed_retry_challenges').select('request_id').where('account_id', '=', wallet.accountId).execute()).length,
      sessions: (await db.selectFrom('wallet_sessions').select('id').where('credential_id', 'in', credentials).orderBy('id').execute()).map((r) => r.id),
    });
    const start = Date.now();
    await maintainAt(start);
    expect(await left()).toEqual({ challenges: ['EMAIL_OTP', 'EMAIL_OTP', 'EMAIL_OTP', 'PASSKEY'], retries: 1, sessions: [open.id, ended.id, opened.id].sort() });
    // A day on: every challenge is a day old, the revoked session ended a day ago, the others 14 minutes later.
    await maintainAt(start + DAY + MINUTE);
    expect(await left()).toEqual({ challenges: [], retries: 0, sessions: [open.id, opened.id].sort() });
    await maintainAt(start + DAY + 16 * MINUTE);
    expect((await left()).sessions).toEqual([]);
  });
});

describe('receiver lookups and UMA invoices', () => {
  const SANDBOX_RECEIVER = '$success.usd@sandbox.uma.money';
  let p: TestPlatform;
  let alice: TestCustomer;
  beforeAll(async () => {
    p = await t.createPlatform();
    alice = await newCustomer(p, 'Alice Ng');
    await fund(p, alice.accounts.USD, 1_000_000);
  });

  async function lookup(): Promise<string> {
    const found = await p.api.get(`/receiver/uma/${encodeURIComponent(SANDBOX_RECEIVER)}`, { customerId: alice.id });
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    return found.body.lookupId;
  }

  async function quote(lookupId: string): Promise<string> {
    const created = await p.api.post('/quotes', {
      lookupId,
      source: { sourceType: 'ACCOUNT', accountId: alice.accounts.USD },
      destination: { destinationType: 'UMA_ADDRESS', umaAddress: SANDBOX_RECEIVER },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 10_000,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.id;
  }

  it('lookups no quote names go a day after they were made; those a quote names stay', async () => {
    const { db } = t.corridor.database;
    const unused = await lookup();
    const used = await lookup();
    await quote(used);
    const left = async () => ({
      lookups: (await db.selectFrom('lookups').select('id').where('id', 'in', [unused, used]).orderBy('id').execute()).map((r) => r.id),
      uma: (await db.selectFrom('uma_lookups').select('id').where('id', 'in', [unused, used]).orderBy('id').execute()).map((r) => r.id),
    });
    const start = Date.now();
    await maintainAt(start);
    expect(await left()).toEqual({ lookups: [unused, used], uma: [unused, used] });
    await maintainAt(start + DAY + MINUTE);
    expect(await left()).toEqual({ lookups: [used], uma: [used] });
  });

  it('unpaid invoices go a day past their expiry, in batches; accepted ones and those with a transaction stay', async () => {
    const { db } = t.corridor.database;
    const paid = await db.selectFrom('quotes').select('transaction_id as id').where('id', '=', await quote(await lookup())).executeTakeFirstOrThrow();
    const now = Date.now();
    const invoice = (status: 'OPEN' | 'ACCEPTED' | 'CANCELLED', expiredMsAgo: number, transactionId = newId('Transaction')) => ({
      payment_hash: uuidv7(),
      platform_id: p.platform.id,
      invoice: 'lnbc1',
      customer_id: alice.id,
      account_id: alice.accounts.USD,
      deposit_account_id: null,
      sender_identifier: '$bob@vasp.example',
      sender_domain: 'vasp.example',
      receiver_identifier: '$alice',
      currency: 'USD',
      amount: 100,
      amount_msats: 1000,
      preimage: 'p',
      counterparty_information: null,
      status,
      transaction_id: transactionId,
      forward_transaction_id: null,
      expires_at: new Date(now - expiredMsAgo),
      created_at: new Date(now - expiredMsAgo - HOUR),
      updated_at: new Date(now - expiredMsAgo),
    });
    const gone = [...Array.from({ length: 6 }, () => invoice('OPEN', DAY + HOUR)), invoice('CANCELLED', DAY + HOUR)];
    const kept = [invoice('OPEN', DAY - HOUR), invoice('CANCELLED', DAY - HOUR), invoice('ACCEPTED', 30 * DAY), invoice('OPEN', 30 * DAY, paid.id)];
    await db.insertInto('uma_invoices').values([...gone, ...kept]).execute();
    const recording = recordingDeletes(db);
    expect(await pruneInvoices(recording.db, new Date(now - DAY), 3)).toBeGreaterThanOrEqual(7);
    expect(recording.deleted.every((n) => n <= 3)).toBe(true);
    const left = await db.selectFrom('uma_invoices').select('payment_hash').where('platform_id', '=', p.platform.id).execute();
    expect(left.map((r) => r.payment_hash).sort()).toEqual(kept.map((i) => i.payment_hash).sort());
  });
});

describe('on a running server', () => {
  it('the maintenance runs shortly after the workers start, not only a whole interval later', async () => {
    const server = await startTestApp();
    try {
      const { db } = server.corridor.database;
      const scope = `first-run-${Date.now()}`;
      const expired = new Date(Date.now() - IDEMPOTENCY_RETENTION_MS - HOUR);
      await db.insertInto('idempotency_keys').values({ scope, key: 'k', request_hash: 'x', status_code: 200, created_at: expired }).execute();
      const timeouts = vi.spyOn(globalThis, 'setTimeout');
      let first: unknown[] | undefined;
      try {
        server.corridor.startWorkers();
        first = timeouts.mock.calls.find(([, ms]) => ms === FIRST_MAINTENANCE_DELAY_MS);
      } finally {
        timeouts.mockRestore();
      }
      expect(first, 'a one-off timer for the first maintenance').toBeDefined();
      (first![0] as () => void)(); // what the timer does when it fires
      const kept = async () => (await db.selectFrom('idempotency_keys').select('key').where('scope', '=', scope).execute()).length;
      await expect.poll(kept, { timeout: 30_000 }).toBe(0);
    } finally {
      await server.close();
    }
  });
});
