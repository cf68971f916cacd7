import { sql, type Selectable } from 'kysely';
import type { DB, Executor } from '../../db/database.js';
import { toJson } from '../../db/database.js';
import { deleteSelected } from '../../db/prune.js';
import type { Json } from '../../db/schema.js';
import { keysetPage } from '../../http/pagination.js';
import { ofPlatform } from '../../db/tenant.js';

/** A receiver currency as its lnurlp response described it. */
export interface ReceiverCurrency {
  code: string;
  /** Estimated millisatoshis per smallest unit. */
  multiplier: number;
  decimals: number;
  min: number;
  max: number;
}

export type SandboxOutcome = 'SUCCESS' | 'PENDING_LONG' | 'FAIL_COMPLIANCE';
export type InvoiceStatus = 'OPEN' | 'ACCEPTED' | 'CANCELLED';
export type PaymentStatus = 'INVOICED' | 'SETTLING' | 'SETTLED' | 'FAILED';

declare module '../../db/schema.js' {
  interface DB {
    uma_keys: { platform_id: string; sealed_private_key: string; public_key: string; certificate: string; created_at: Date };
    uma_nonces: { vasp_domain: string; nonce: string; signed_at: Date };
    uma_lookups: {
      id: string;
      platform_id: string;
      receiver_uma_address: string;
      receiver_domain: string;
      sandbox_outcome: SandboxOutcome | null;
      sender_identifier: string | null;
      callback: string | null;
      uma_version: string | null;
      currencies: Json<ReceiverCurrency[]>;
      created_at: Date;
    };
    uma_invoices: {
      payment_hash: string;
      platform_id: string;
      invoice: string;
      customer_id: string;
      account_id: string;
      deposit_account_id: string | null;
      sender_identifier: string;
      sender_domain: string;
      receiver_identifier: string;
      currency: string;
      amount: number;
      amount_msats: number;
      preimage: string;
      counterparty_information: Json<Record<string, unknown>> | null;
      status: InvoiceStatus;
      transaction_id: string;
      forward_transaction_id: string | null;
      expires_at: Date;
      created_at: Date;
      updated_at: Date;
    };
    uma_payments: {
      quote_id: string;
      platform_id: string;
      receiver_domain: string;
      invoice: string;
      payment_hash: string;
      amount_msats: number;
      status: PaymentStatus;
      preimage: string | null;
      created_at: Date;
      updated_at: Date;
    };
    uma_providers: {
      platform_id: string;
      id: string;
      name: string;
      supported_regions: string[];
      currency_codes: string[];
      created_at: Date;
      updated_at: Date;
    };
  }
}

// ── keys ─────────────────────────────────────────────────────────────────────────────────────────

export interface StoredKey {
  sealedPrivateKey: string;
  publicKey: string;
  certificate: string;
}

export async function findKey(ex: Executor, platformId: string): Promise<StoredKey | undefined> {
  const row = await ex.selectFrom('uma_keys').selectAll().where('platform_id', '=', platformId).executeTakeFirst();
  return row && { sealedPrivateKey: row.sealed_private_key, publicKey: row.public_key, certificate: row.certificate };
}

/** Stores the platform's key unless another process stored one first (the caller reads it back). */
export async function insertKey(ex: Executor, platformId: string, key: StoredKey, now: Date): Promise<void> {
  await ex
    .insertInto('uma_keys')
    .values({ platform_id: platformId, sealed_private_key: key.sealedPrivateKey, public_key: key.publicKey, certificate: key.certificate, created_at: now })
    .onConflict((oc) => oc.column('platform_id').doNothing())
    .execute();
}

// ── nonces ───────────────────────────────────────────────────────────────────────────────────────

/** Records a nonce; false when this domain already used it. */
export async function insertNonce(ex: Executor, domain: string, nonce: string, signedAt: Date): Promise<boolean> {
  const row = await ex
    .insertInto('uma_nonces')
    .values({ vasp_domain: domain, nonce, signed_at: signedAt })
    .onConflict((oc) => oc.columns(['vasp_domain', 'nonce']).doNothing())
    .returning('nonce')
    .executeTakeFirst();
  return row !== undefined;
}

export async function pruneNonces(ex: Executor, signedBefore: Date): Promise<void> {
  await ex.deleteFrom('uma_nonces').where('signed_at', '<', signedBefore).execute();
}

// ── lookups ──────────────────────────────────────────────────────────────────────────────────────

export interface UmaLookupRecord {
  id: string;
  platformId: string;
  receiverUmaAddress: string;
  receiverDomain: string;
  sandboxOutcome: SandboxOutcome | null;
  senderIdentifier: string | null;
  callback: string | null;
  umaVersion: string | null;
  currencies: ReceiverCurrency[];
  createdAt: Date;
}

export async function insertUmaLookup(ex: Executor, l: UmaLookupRecord): Promise<void> {
  await ex
    .insertInto('uma_lookups')
    .values({
      id: l.id,
      platform_id: l.platformId,
      receiver_uma_address: l.receiverUmaAddress,
      receiver_domain: l.receiverDomain,
      sandbox_outcome: l.sandboxOutcome,
      sender_identifier: l.senderIdentifier,
      callback: l.callback,
      uma_version: l.umaVersion,
      currencies: toJson(l.currencies),
      created_at: l.createdAt,
    })
    .execute();
}

export async function findUmaLookup(ex: Executor, platformId: string, id: string): Promise<UmaLookupRecord | undefined> {
  const row = await ex.selectFrom('uma_lookups').selectAll().where('id', '=', id).where(ofPlatform(platformId)).executeTakeFirst();
  if (!row) return undefined;
  return {
    id: row.id,
    platformId: row.platform_id,
    receiverUmaAddress: row.receiver_uma_address,
    receiverDomain: row.receiver_domain,
    sandboxOutcome: row.sandbox_outcome,
    senderIdentifier: row.sender_identifier,
    callback: row.callback,
    umaVersion: row.uma_version,
    currencies: row.currencies,
    createdAt: row.created_at,
  };
}

// ── invoices (receiving side) ────────────────────────────────────────────────────────────────────

export interface InvoiceRecord {
  paymentHash: string;
  platformId: string;
  invoice: string;
  customerId: string;
  accountId: string;
  depositAccountId: string | null;
  senderIdentifier: string;
  senderDomain: string;
  receiverIdentifier: string;
  currency: string;
  amount: number;
  amountMsats: number;
  preimage: string;
  counterpartyInformation: Record<string, unknown> | null;
  status: InvoiceStatus;
  transactionId: string;
  forwardTransactionId: string | null;
  expiresAt: Date;
  createdAt: Date;
}

export async function insertInvoice(ex: Executor, i: InvoiceRecord): Promise<void> {
  await ex
    .insertInto('uma_invoices')
    .values({
      payment_hash: i.paymentHash,
      platform_id: i.platformId,
      invoice: i.invoice,
      customer_id: i.customerId,
      account_id: i.accountId,
      deposit_account_id: i.depositAccountId,
      sender_identifier: i.senderIdentifier,
      sender_domain: i.senderDomain,
      receiver_identifier: i.receiverIdentifier,
      currency: i.currency,
      amount: i.amount,
      amount_msats: i.amountMsats,
      preimage: i.preimage,
      counterparty_information: i.counterpartyInformation && toJson(i.counterpartyInformation),
      status: i.status,
      transaction_id: i.transactionId,
      forward_transaction_id: null,
      expires_at: i.expiresAt,
      created_at: i.createdAt,
      updated_at: i.createdAt,
    })
    .execute();
}

export async function findInvoice(ex: Executor, paymentHash: string): Promise<InvoiceRecord | undefined> {
  const row = await ex.selectFrom('uma_invoices').selectAll().where('payment_hash', '=', paymentHash).executeTakeFirst();
  if (!row) return undefined;
  return {
    paymentHash: row.payment_hash,
    platformId: row.platform_id,
    invoice: row.invoice,
    customerId: row.customer_id,
    accountId: row.account_id,
    depositAccountId: row.deposit_account_id,
    senderIdentifier: row.sender_identifier,
    senderDomain: row.sender_domain,
    receiverIdentifier: row.receiver_identifier,
    currency: row.currency,
    amount: Number(row.amount),
    amountMsats: Number(row.amount_msats),
    preimage: row.preimage,
    counterpartyInformation: row.counterparty_information,
    status: row.status,
    transactionId: row.transaction_id,
    forwardTransactionId: row.forward_transaction_id,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
  };
}

/** Moves an invoice between statuses; false when it was not in `from`. */
export async function moveInvoice(ex: Executor, paymentHash: string, from: InvoiceStatus, to: InvoiceStatus, now: Date): Promise<boolean> {
  const row = await ex
    .updateTable('uma_invoices')
    .set({ status: to, updated_at: now })
    .where('payment_hash', '=', paymentHash)
    .where('status', '=', from)
    .returning('payment_hash')
    .executeTakeFirst();
  return row !== undefined;
}

/** Payments to the customer still to forward to a default deposit account (only that of `transactionId`, if given). */
export async function unforwardedOf(ex: Executor, platformId: string, customerId: string, transactionId?: string): Promise<string[]> {
  const rows = await ex
    .selectFrom('uma_invoices')
    .select('payment_hash')
    .where('platform_id', '=', platformId)
    .where('customer_id', '=', customerId)
    .where('deposit_account_id', 'is not', null)
    .where('forward_transaction_id', 'is', null)
    .$if(transactionId !== undefined, (q) => q.where('transaction_id', '=', transactionId!))
    .execute();
  return rows.map((r) => r.payment_hash);
}

/** Records the transfer that forwarded the invoice's money; false when one was recorded already. */
export async function setForwarded(ex: Executor, paymentHash: string, transactionId: string, now: Date): Promise<boolean> {
  const row = await ex
    .updateTable('uma_invoices')
    .set({ forward_transaction_id: transactionId, updated_at: now })
    .where('payment_hash', '=', paymentHash)
    .where('forward_transaction_id', 'is', null)
    .returning('payment_hash')
    .executeTakeFirst();
  return row !== undefined;
}

// ── payments (sending side) ──────────────────────────────────────────────────────────────────────

export interface PaymentRecord {
  quoteId: string;
  platformId: string;
  receiverDomain: string;
  invoice: string;
  paymentHash: string;
  amountMsats: number;
  status: PaymentStatus;
  preimage: string | null;
}

function toPayment(row: Selectable<DB['uma_payments']>): PaymentRecord {
  return {
    quoteId: row.quote_id,
    platformId: row.platform_id,
    receiverDomain: row.receiver_domain,
    invoice: row.invoice,
    paymentHash: row.payment_hash,
    amountMsats: Number(row.amount_msats),
    status: row.status,
    preimage: row.preimage,
  };
}

/** Stores the invoice a quote obtained; when another run stored one first, returns that one. */
export async function insertPayment(ex: Executor, p: PaymentRecord, now: Date): Promise<PaymentRecord> {
  await ex
    .insertInto('uma_payments')
    .values({
      quote_id: p.quoteId,
      platform_id: p.platformId,
      receiver_domain: p.receiverDomain,
      invoice: p.invoice,
      payment_hash: p.paymentHash,
      amount_msats: p.amountMsats,
      status: p.status,
      preimage: p.preimage,
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) => oc.column('quote_id').doNothing())
    .execute();
  return (await findPayment(ex, p.platformId, p.quoteId))!;
}

export async function findPayment(ex: Executor, platformId: string, quoteId: string): Promise<PaymentRecord | undefined> {
  const row = await ex.selectFrom('uma_payments').selectAll().where('platform_id', '=', platformId).where('quote_id', '=', quoteId).executeTakeFirst();
  return row && toPayment(row);
}

/** Moves a payment from one of `from` to `to`; undefined when it was in none of them. */
export async function movePayment(
  ex: Executor,
  quoteId: string,
  from: PaymentStatus[],
  to: PaymentStatus,
  now: Date,
  preimage?: string,
): Promise<PaymentRecord | undefined> {
  const row = await ex
    .updateTable('uma_payments')
    .set({ status: to, updated_at: now, ...(preimage && { preimage }) })
    .where('quote_id', '=', quoteId)
    .where('status', 'in', from)
    .returningAll()
    .executeTakeFirst();
  return row && toPayment(row);
}

// ── providers ────────────────────────────────────────────────────────────────────────────────────

export interface ProviderSighting {
  platformId: string;
  domain: string;
  name: string;
  supportedRegions: string[];
  /** Currency codes seen; merged with those already known. */
  currencies: string[];
}

export async function upsertProvider(ex: Executor, p: ProviderSighting, now: Date): Promise<void> {
  const codes = [...new Set(p.currencies)].sort();
  await ex
    .insertInto('uma_providers')
    .values({
      platform_id: p.platformId,
      id: p.domain,
      name: p.name,
      supported_regions: p.supportedRegions,
      currency_codes: codes,
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) =>
      oc.columns(['platform_id', 'id']).doUpdateSet({
        // Union of the codes known and seen, deduplicated and sorted.
        currency_codes: sql<string[]>`array(select distinct unnest(uma_providers.currency_codes || excluded.currency_codes) order by 1)`,
        updated_at: now,
      }),
    )
    .execute();
}

export interface ProviderQuery {
  countryCode?: string;
  currencyCode?: string;
  limit?: number;
  cursor?: string;
  sortOrder?: 'asc' | 'desc';
}

export async function listProviders(ex: Executor, platformId: string, q: ProviderQuery) {
  let base = ex.selectFrom('uma_providers').selectAll().where('platform_id', '=', platformId);
  if (q.countryCode) base = base.where(sql<boolean>`${q.countryCode} = any(supported_regions)`);
  if (q.currencyCode) base = base.where(sql<boolean>`${q.currencyCode} = any(currency_codes)`);
  return keysetPage(base, { limit: q.limit, cursor: q.cursor, order: q.sortOrder ?? 'desc' });
}

// ── pruning (maintenance) ────────────────────────────────────────────────────────────────────────

/**
 * Deletes, in batches, invoices no payment was accepted for (OPEN or CANCELLED) that expired
 * before `before` (`expires_at` is real time). One whose transaction exists is kept: crediting
 * commits before the invoice moves to ACCEPTED, so a crash in between leaves money recorded
 * against an OPEN invoice.
 */
export async function pruneInvoices(ex: Executor, before: Date, batch?: number): Promise<number> {
  const pick = () =>
    ex
      .selectFrom('uma_invoices as i')
      .select('i.payment_hash')
      .where(sql<boolean>`i.status in ('OPEN', 'CANCELLED')`) // literals, so that the partial index matches
      .where('i.expires_at', '<', before)
      .where(({ not, exists, selectFrom }) => not(exists(selectFrom('transactions as t').select('t.id').whereRef('t.id', '=', 'i.transaction_id'))))
      .orderBy('i.expires_at');
  return deleteSelected(ex, 'uma_invoices', 'payment_hash', pick, batch);
}
