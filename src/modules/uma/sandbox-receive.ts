import type { ServiceContext } from '../../core/context.js';
import { invalidInput, ServiceError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { Customer, CustomerService } from '../customers/service.js';
import type { Platform } from '../platform/service.js';
import { requireSandbox } from '../sandbox/service.js';
import type { TransactionView } from '../transactions/schemas.js';
import type { TransactionService } from '../transactions/service.js';
import { parseUmaAddress } from './address.js';
import type { Deposits } from './deposit.js';
import { createInvoice } from './invoice.js';
import { receivingPlan, type Receivable, type ReceiverDeps } from './receiver.js';
import * as repo from './repository.js';
import { SANDBOX_SENDER_INFORMATION } from './sandbox.js';
import type { SandboxUmaReceiveRequest } from './schemas.js';

export interface SandboxReceiveDeps extends ReceiverDeps {
  customers: ReceiverDeps['customers'] & Pick<CustomerService, 'requireCustomer'>;
  transactions: Pick<TransactionService, 'present'>;
  deposits: Deposits;
  /** The sandbox's own UMA domain: simulated payments come from its addresses only. */
  sandboxDomain: string;
}

function fieldError(code: 'INVALID_CURRENCY' | 'AMOUNT_OUT_OF_RANGE' | 'INVALID_UMA_ADDRESS', field: string, constraint: string, message: string) {
  return new ServiceError(code, message, { details: { errors: [{ field, constraint, message }] } });
}

/**
 * POST /sandbox/uma/receive: an UMA payment arrives for a customer as if a sandbox sender had paid
 * them, through the same path as a real one (the platform's approval flow, crediting, forwarding
 * to a defaultUmaDepositAccount). It is recorded as an accepted invoice like a real payment.
 */
export function createSandboxReceive(deps: SandboxReceiveDeps) {
  const { database, clock } = deps;

  async function receiver(platform: Platform, body: SandboxUmaReceiveRequest): Promise<Customer> {
    if (!body.customerId && !body.receiverUmaAddress) throw invalidInput('receiverUmaAddress', 'give receiverUmaAddress or customerId', 'required');
    if (body.customerId) {
      const customer = await deps.customers.requireCustomer(database.db, platform.id, body.customerId);
      if (body.receiverUmaAddress && customer.umaAddress.toLowerCase() !== body.receiverUmaAddress.toLowerCase()) {
        throw invalidInput('receiverUmaAddress', 'is not the UMA address of customerId', 'mismatch');
      }
      return customer;
    }
    const customer = await deps.customers.findActive(database.db, platform.id, { umaAddress: body.receiverUmaAddress! });
    if (!customer) throw new ServiceError('USER_NOT_FOUND', `no customer has the UMA address ${body.receiverUmaAddress}`);
    return customer;
  }

  function checkAmount(receivable: Receivable, amount: number): void {
    const { minAmount, currencyCode } = receivable.config;
    const { maxAmount } = receivable;
    if (amount < minAmount) throw fieldError('AMOUNT_OUT_OF_RANGE', 'receivingCurrencyAmount', 'minimum', `the amount is below this platform's minimum of ${minAmount} ${currencyCode}`);
    if (amount > maxAmount) {
      const why = maxAmount < receivable.config.maxAmount ? ' (more would be more millisatoshis than an invoice holds exactly)' : " (this platform's maximum)";
      throw fieldError('AMOUNT_OUT_OF_RANGE', 'receivingCurrencyAmount', 'maximum', `the amount is above ${maxAmount} ${currencyCode}${why}`);
    }
  }

  async function receive(ctx: ServiceContext<Platform>, body: SandboxUmaReceiveRequest): Promise<TransactionView> {
    requireSandbox(ctx);
    const { platform } = ctx;
    const sender = parseUmaAddress(body.senderUmaAddress);
    if (!sender) throw fieldError('INVALID_UMA_ADDRESS', 'senderUmaAddress', 'format', 'senderUmaAddress must look like $name@domain');
    if (sender.domain !== deps.sandboxDomain.toLowerCase()) {
      throw new ServiceError('USER_NOT_FOUND', `${sender.address} is not a sandbox sender: use an address on ${deps.sandboxDomain}, e.g. $success.usd@${deps.sandboxDomain}`);
    }
    const customer = await receiver(platform, body);
    const plan = await receivingPlan(deps, platform, customer);
    const receivable = plan.currencies.find((c) => c.config.currencyCode === body.receivingCurrencyCode);
    if (!receivable) {
      const offered = plan.currencies.map((c) => c.config.currencyCode).join(', ') || 'nothing';
      throw fieldError('INVALID_CURRENCY', 'receivingCurrencyCode', 'supported', `${customer.umaAddress} receives ${offered}, not ${body.receivingCurrencyCode}`);
    }
    checkAmount(receivable, body.receivingCurrencyAmount);
    const account = await deps.accounts.findCustomerAccount(database.db, platform.id, customer.id, receivable.config.currencyCode);
    if (!account) throw fieldError('INVALID_CURRENCY', 'receivingCurrencyCode', 'account', `the customer has no ${receivable.config.currencyCode} account`);
    const nowMs = clock.realNowMs();
    const issued = createInvoice(Math.round(body.receivingCurrencyAmount * receivable.multiplier), nowMs);
    const invoice: repo.InvoiceRecord = {
      paymentHash: issued.paymentHash,
      platformId: platform.id,
      invoice: issued.invoice,
      customerId: customer.id,
      accountId: account.id,
      depositAccountId: plan.deposit?.id ?? null,
      senderIdentifier: sender.address,
      senderDomain: sender.domain,
      receiverIdentifier: customer.umaAddress,
      currency: receivable.config.currencyCode,
      amount: body.receivingCurrencyAmount,
      amountMsats: issued.amountMsats,
      preimage: issued.preimage,
      counterpartyInformation: SANDBOX_SENDER_INFORMATION,
      status: 'ACCEPTED',
      transactionId: newId('Transaction'),
      forwardTransactionId: null,
      expiresAt: new Date(nowMs),
      createdAt: new Date(nowMs),
    };
    // One commit with the Idempotency-Key record (`ctx.tx`): a retry after a crash either replays
    // the answer or, nothing having committed, receives the payment once.
    return deps.deposits.creditWithin(platform, invoice, customer.platformCustomerId, (create) =>
      ctx.tx(async (trx) => {
        await repo.insertInvoice(trx, invoice);
        return deps.transactions.present(await create(trx), platform.id);
      }),
    );
  }

  return { receive };
}
