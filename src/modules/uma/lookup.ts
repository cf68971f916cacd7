import type { Clock } from '../../core/clock.js';
import type { ServiceContext } from '../../core/context.js';
import { currency, findCurrency } from '../../core/currencies.js';
import { invalidInput, ServiceError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { Database, Executor } from '../../db/database.js';
import { transact } from '../../db/transact.js';
import type { Customer, CustomerService } from '../customers/service.js';
import type { Platform } from '../platform/service.js';
import { LOOKUP_LIFETIME_MS } from '../quotes/lookup.js';
import type { LookupRecord } from '../quotes/repository.js';
import type { CurrencyPreference, RequiredPayerField } from '../quotes/schemas.js';
import type { RateService } from '../rates/service.js';
import { parseUmaAddress, type UmaAddress } from './address.js';
import type { Authenticator } from './authentication.js';
import type { UmaKeys } from './keys.js';
import type { ProviderBook } from './providers.js';
import { lookUpRemote } from './remote-lookup.js';
import type { NetworkPolicy } from './counterparty.js';
import * as repo from './repository.js';
import type { ReceiverCurrency, SandboxOutcome } from './repository.js';
import { SANDBOX_LIMITS, SANDBOX_PAYER_FIELDS, sandboxReceiver } from './sandbox.js';
import type { ReceiverUmaLookupView, UmaLookupQuery } from './schemas.js';

export interface UmaLookupDeps {
  network: NetworkPolicy;
  database: Database;
  clock: Clock;
  sandboxDomain: string;
  keys: UmaKeys;
  auth: Authenticator;
  providers: ProviderBook;
  customers: Pick<CustomerService, 'requireCustomer' | 'findActive'>;
  rates: Pick<RateService, 'estimateRate'>;
  /** The quotes service stores the generic lookup row (built after this module). */
  recordLookup: (ex: Executor, lookup: LookupRecord) => Promise<void>;
}

/** What a receiver said, before it becomes a lookup. */
interface Discovered {
  sandboxOutcome: SandboxOutcome | null;
  callback: string | null;
  umaVersion: string | null;
  currencies: ReceiverCurrency[];
  requiredPayerDataFields: RequiredPayerField[];
}

function addressError(field: string, message: string): ServiceError {
  return new ServiceError('INVALID_UMA_ADDRESS', message, { details: { errors: [{ field, constraint: 'format', message }] } });
}

function parseOrThrow(value: string, field: string): UmaAddress {
  const parsed = parseUmaAddress(value);
  if (!parsed) throw addressError(field, `${field} must look like $name@domain (name: letters, digits, . _ + -)`);
  return parsed;
}

/** The currency estimates convert from: the customer's first that can pay out, else the platform's. */
function senderCurrencyFor(platform: Platform, customer: Customer | null): string | undefined {
  const outgoing = platform.supportedCurrencies.filter((c) => c.enabledTransactionTypes.includes('OUTGOING')).map((c) => c.currencyCode);
  return customer?.currencies.find((code) => outgoing.includes(code)) ?? outgoing[0];
}

/** GET /receiver/uma/{receiverUmaAddress}: sandbox addresses answered locally, others over UMA. */
export function createUmaLookups(deps: UmaLookupDeps) {
  const { database, clock } = deps;

  function discoverSandbox(receiver: UmaAddress): Discovered {
    const sandbox = sandboxReceiver(receiver.local);
    if (!sandbox) throw new ServiceError('USER_NOT_FOUND', `${receiver.address} is not one of the sandbox UMA addresses (see docs/uma.md)`);
    const decimals = currency(sandbox.currency).decimals;
    return {
      sandboxOutcome: sandbox.outcome,
      callback: null,
      umaVersion: null,
      currencies: [{ code: sandbox.currency, multiplier: 0, decimals, ...SANDBOX_LIMITS }],
      requiredPayerDataFields: SANDBOX_PAYER_FIELDS,
    };
  }

  /**
   * The sending customer: `customerId`'s, or the one whose UMA address `senderUmaAddress` is (none:
   * an address of the platform itself, for payments from its own accounts). Given both, they must
   * name one customer: the sender's address and the payer data sent with it come from one record.
   */
  async function senderCustomer(platform: Platform, query: UmaLookupQuery): Promise<Customer | null> {
    const given = query.senderUmaAddress ? parseOrThrow(query.senderUmaAddress, 'querystring.senderUmaAddress').address : undefined;
    if (!query.customerId) return (await deps.customers.findActive(database.db, platform.id, { umaAddress: given! })) ?? null;
    const customer = await deps.customers.requireCustomer(database.db, platform.id, query.customerId);
    if (given && given.toLowerCase() !== customer.umaAddress?.toLowerCase()) {
      throw invalidInput('querystring.senderUmaAddress', `this is not the UMA address of customer ${customer.id}; give one of them, or both alike`, 'mismatch');
    }
    return customer;
  }

  /** The sender's identifier signs the payment, so it must be on this platform's UMA domain. */
  function senderIdentifier(platform: Platform, query: UmaLookupQuery, customer: Customer | null, sandbox: boolean): string {
    const given = query.senderUmaAddress ? parseOrThrow(query.senderUmaAddress, 'querystring.senderUmaAddress') : undefined;
    const identifier = given ?? parseUmaAddress(customer!.umaAddress);
    const field = given ? 'querystring.senderUmaAddress' : 'querystring.customerId';
    if (!identifier) throw addressError(field, 'the sending customer has no valid UMA address');
    if (!sandbox && identifier.domain !== platform.umaDomain.toLowerCase()) {
      throw addressError(field, `the sender's UMA address must be on this platform's UMA domain ${platform.umaDomain}, whose key signs the payment`);
    }
    return identifier.address;
  }

  async function preferences(platform: Platform, customer: Customer | null, currencies: ReceiverCurrency[]): Promise<CurrencyPreference[]> {
    const from = senderCurrencyFor(platform, customer);
    const out: CurrencyPreference[] = [];
    for (const c of currencies) {
      if (!findCurrency(c.code) || !from) continue;
      const rate = await deps.rates.estimateRate(platform, from, c.code).catch(() => undefined);
      if (rate !== undefined && rate > 0) out.push({ currency: currency(c.code), estimatedExchangeRate: rate, min: Math.max(1, c.min), max: c.max });
    }
    return out;
  }

  async function store(platform: Platform, receiver: UmaAddress, customer: Customer | null, sender: string, found: Discovered, supported: CurrencyPreference[]) {
    const now = clock.now(platform);
    const id = newId('Lookup');
    const generic: LookupRecord = {
      id,
      platformId: platform.id,
      kind: 'UMA',
      accountId: null,
      receiverUmaAddress: receiver.address,
      customerId: customer?.id ?? null,
      senderUmaAddress: sender,
      supportedCurrencies: supported,
      requiredPayerDataFields: found.requiredPayerDataFields,
      expiresAt: new Date(now.getTime() + LOOKUP_LIFETIME_MS),
      createdAt: now,
    };
    await transact(database.db, async (trx) => {
      await deps.recordLookup(trx, generic);
      await repo.insertUmaLookup(trx, {
        id,
        platformId: platform.id,
        receiverUmaAddress: receiver.address,
        receiverDomain: receiver.domain,
        sandboxOutcome: found.sandboxOutcome,
        senderIdentifier: sender,
        callback: found.callback,
        umaVersion: found.umaVersion,
        currencies: found.currencies,
        createdAt: now,
      });
    });
    return id;
  }

  async function lookupUma(ctx: ServiceContext<Platform>, address: string, query: UmaLookupQuery): Promise<ReceiverUmaLookupView> {
    const { platform } = ctx;
    const receiver = parseOrThrow(address, 'receiverUmaAddress');
    if (!query.customerId && !query.senderUmaAddress) {
      const message = 'give customerId or senderUmaAddress to say who is sending';
      throw new ServiceError('INVALID_INPUT', message, { details: { errors: [{ field: 'querystring.customerId', constraint: 'required', message }] } });
    }
    const customer = await senderCustomer(platform, query);
    const sandbox = platform.mode === 'SANDBOX' && receiver.domain === deps.sandboxDomain;
    const sender = senderIdentifier(platform, query, customer, sandbox);
    const found = sandbox ? discoverSandbox(receiver) : { sandboxOutcome: null, ...(await lookUpRemote(deps, platform, receiver)) };
    const supported = await preferences(platform, customer, found.currencies);
    const lookupId = await store(platform, receiver, customer, sender, found, supported);
    if (!sandbox) await deps.providers.seen(platform, receiver.domain, supported.map((c) => c.currency.code));
    return { lookupId, receiverUmaAddress: receiver.address, supportedCurrencies: supported, requiredPayerDataFields: found.requiredPayerDataFields };
  }

  return { lookupUma };
}
