import { createHash } from 'node:crypto';
import { ServiceError, invalidInput } from '../../core/errors.js';
import { sandboxFundingInstructions } from '../accounts/funding.js';
import { evmAddress, solanaAddress, sparkAddress } from '../accounts/sandbox-addresses.js';
import { CRYPTO_NETWORKS, NETWORKS } from '../crypto/networks.js';
import type { PaymentInstructions } from '../accounts/schemas.js';
import { requireSandbox } from '../sandbox/service.js';
import type { FailureDetail, FailureReason } from '../transactions/lifecycle.js';
import type { TransactionView } from '../transactions/schemas.js';
import type { QuoteExecution } from './execute.js';
import { quoteAccounts } from './legs.js';
import { refund, type QuoteOutcomes } from './outcomes.js';
import { quoteNotFound, refuseUnlessExecutable } from './present.js';
import * as repo from './repository.js';
import type { QuoteRecord } from './repository.js';
import type { SandboxSendRequest } from './schemas.js';
import type { QuoteContext, QuoteServiceDeps } from './types.js';

/** Instant rails a real-time funded USD quote can be paid with (ACH and wires are too slow). */
const INSTANT_USD_RAILS = ['RTP', 'FEDNOW'] as const;
const BECH32 = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';

/**
 * A sandbox Lightning invoice for `sats`: BOLT11-shaped for regtest (lnbcrt + amount + bech32
 * data, like the sandbox's regtest Spark addresses), not payable.
 */
export function sandboxInvoice(seed: string, sats: number): string {
  let data = '';
  for (let round = 0; data.length < 180; round++) {
    for (const byte of createHash('sha256').update(`${round}:${seed}`).digest()) data += BECH32[byte & 31];
  }
  // Amount in nano-BTC (1 sat = 10 n), as BOLT11 writes it.
  return `lnbcrt${sats * 10}n1p${data.slice(0, 180)}`;
}

/** The deposit wallet of each network family, for a payer who said which network it sends on. */
const NETWORK_WALLETS: Record<string, { accountType: string; address: (seed: string) => string }> = {
  SOLANA: { accountType: 'SOLANA_WALLET', address: solanaAddress },
  ETHEREUM: { accountType: 'ETHEREUM_WALLET', address: evmAddress },
  BASE: { accountType: 'BASE_WALLET', address: evmAddress },
  SPARK: { accountType: 'SPARK_WALLET', address: sparkAddress },
  LIGHTNING: { accountType: 'SPARK_WALLET', address: sparkAddress },
};

/** Stablecoins live on several networks, so their payer must say which one it sends on. */
const STABLECOINS: ReadonlySet<string> = new Set(['USDC', 'USDT']);

/** `source.cryptoNetwork` of a real-time funded quote: required for stablecoins, and one that carries the currency. */
export function checkFundingNetwork(currency: string, network: string | undefined): void {
  // The reference's Spark deposit details hold bitcoin only, so USDC on Spark cannot be asked for.
  const carriers = CRYPTO_NETWORKS.filter((n) => NETWORKS[n].assets.includes(currency) && (currency === 'BTC' || !n.startsWith('SPARK_')));
  if (network === undefined) {
    if (STABLECOINS.has(currency)) throw invalidInput('source.cryptoNetwork', `say which network the ${currency} is sent on: one of ${carriers.join(', ')}`, 'required');
    return;
  }
  if (!(carriers as string[]).includes(network)) {
    const which = carriers.length > 0 ? `${currency} is sent on ${carriers.join(', ')}` : `${currency} is not sent on a crypto network`;
    throw invalidInput('source.cryptoNetwork', `${which}, not ${network}`, 'enum');
  }
}

interface FundingSubject {
  id: string;
  /** The network a crypto payer sends on (`source.cryptoNetwork`), checked at quote creation. */
  cryptoNetwork?: string;
  sendingCurrency: string;
  customerId: string | null;
  fundingReference: string;
  totalSendingAmount: number;
  expiresAt: Date;
}

/**
 * Where the payer sends a real-time funded quote's money (sandbox): bank details with a unique
 * reference for fiat, a Spark address and a Lightning invoice for BTC, an address for
 * stablecoins. Empty when the sandbox has no deposit format for the currency.
 */
export function realtimeFundingInstructions(q: FundingSubject): PaymentInstructions[] {
  const base = sandboxFundingInstructions({ id: q.id, currency: q.sendingCurrency, customerId: q.customerId, fundingReference: q.fundingReference });
  const wallet = q.cryptoNetwork ? NETWORK_WALLETS[q.cryptoNetwork.split('_')[0]] : undefined;
  return base.map((instruction) => {
    const info = { ...instruction.accountOrWalletInfo };
    if (wallet && info.address) Object.assign(info, { accountType: wallet.accountType, address: wallet.address(q.id) });
    if (info.accountType === 'USD_ACCOUNT') info.paymentRails = [...INSTANT_USD_RAILS];
    if (info.accountType === 'SPARK_WALLET') info.invoice = sandboxInvoice(q.id, q.totalSendingAmount);
    const what = info.address ? 'this address' : `this account with reference ${q.fundingReference}`;
    return {
      ...instruction,
      accountOrWalletInfo: info,
      instructionsNotes: `Send exactly ${q.totalSendingAmount} (smallest unit of ${q.sendingCurrency}) to ${what} by an instant payment before ${q.expiresAt.toISOString()}; the quote executes when it arrives.`,
    };
  });
}

/** The document an EMBEDDED_WALLET source signs to authorize executing the quote. */
export function walletPayloadToSign(q: Pick<QuoteRecord, 'id' | 'debitAccountId' | 'sendingCurrency' | 'totalSendingAmount' | 'receivingCurrency' | 'totalReceivingAmount' | 'destination' | 'expiresAt'>): string {
  return JSON.stringify({
    type: 'QUOTE_EXECUTION',
    quoteId: q.id,
    accountId: q.debitAccountId,
    sendingCurrency: q.sendingCurrency,
    totalSendingAmount: q.totalSendingAmount,
    receivingCurrency: q.receivingCurrency,
    totalReceivingAmount: q.totalReceivingAmount,
    destination: q.destination.accountId ?? q.destination.umaAddress,
    expiresAt: q.expiresAt.toISOString(),
  });
}

export function walletSigningInstructions(payloadToSign: string): PaymentInstructions[] {
  return [
    {
      isPlatformAccount: false,
      accountOrWalletInfo: { accountType: 'EMBEDDED_WALLET', payloadToSign },
      instructionsNotes:
        'Sign payloadToSign byte for byte with the session key of a verified credential of the wallet; send the base64 signature as Service-Wallet-Signature on POST /quotes/{quoteId}/execute.',
    },
  ];
}

/** The payloadToSign of an EMBEDDED_WALLET quote (for the execute authorizer). */
export function payloadToSignOf(q: QuoteRecord): string | undefined {
  return q.paymentInstructions?.find((i) => i.accountOrWalletInfo.payloadToSign)?.accountOrWalletInfo.payloadToSign;
}

/** POST /sandbox/send: the real-time funding payment of a quote arrives. */
export function createSandboxFunding(deps: QuoteServiceDeps, execution: QuoteExecution, outcomes: QuoteOutcomes) {
  const { database, clock, ledger, transactions } = deps;

  /**
   * A funding payment that cannot be paid out is sent back and the quote fails: of the wrong
   * amount (FUNDING_AMOUNT_MISMATCH), or for an external account deleted since the quote was made.
   */
  async function rejectFunding(ctx: QuoteContext, q: QuoteRecord, reason: FailureReason, detail: FailureDetail | null): Promise<TransactionView> {
    const { platform } = ctx;
    return ctx.tx(async (trx) => {
      const now = clock.now(platform);
      const failed = await repo.claimForExecution(trx, { platform, id: q.id, to: 'FAILED', now, followUp: null });
      if (!failed) {
        refuseUnlessExecutable((await repo.findQuote(trx, platform.id, q.id)) ?? q, now);
        throw new ServiceError('QUOTE_ALREADY_EXECUTED', 'this quote was already funded');
      }
      await outcomes.failTransaction(trx, platform, failed, reason, detail, refund('COMPLETED', 'TRANSACTION_FAILED', now));
      return transactions.present(await transactions.require(trx, platform.id, q.transactionId), platform.id);
    });
  }

  async function sandboxSend(ctx: QuoteContext, body: SandboxSendRequest): Promise<TransactionView> {
    requireSandbox(ctx);
    const { platform } = ctx;
    const q = await repo.findQuote(database.db, platform.id, body.quoteId);
    if (!q) throw quoteNotFound();
    if (q.source.sourceType !== 'REALTIME_FUNDING') {
      throw invalidInput('quoteId', 'this quote is paid from an account: execute it with POST /quotes/{quoteId}/execute', 'sourceType');
    }
    if (body.currencyCode !== q.sendingCurrency) {
      const message = `this quote is funded in ${q.sendingCurrency}, not ${body.currencyCode}`;
      throw new ServiceError('INVALID_CURRENCY', message, { details: { errors: [{ field: 'currencyCode', constraint: 'match', message }] } });
    }
    refuseUnlessExecutable(q, clock.now(platform));
    if ((body.currencyAmount ?? q.totalSendingAmount) !== q.totalSendingAmount) return rejectFunding(ctx, q, 'FUNDING_AMOUNT_MISMATCH', null);
    if (!(await execution.hasPayee(database.db, platform, q))) return rejectFunding(ctx, q, 'QUOTE_EXECUTION_FAILED', 'ACCOUNT_CLOSED');

    const accounts = await quoteAccounts(ledger, platform, q);
    let claimed: QuoteRecord | undefined;
    await ctx.tx(async (trx) => {
      claimed = await execution.claim(trx, platform, q, accounts);
      return transactions.present(await transactions.require(trx, platform.id, q.transactionId), platform.id);
    }, { provisional: true });
    await execution.continueAfterCommit(platform, claimed!, accounts);
    return transactions.present(await transactions.require(database.db, platform.id, q.transactionId), platform.id);
  }

  return { sandboxSend };
}
