import type { ServiceContext } from '../../core/context.js';
import { ServiceError } from '../../core/errors.js';
import type { Database } from '../../db/database.js';
import type { AccountService } from '../accounts/service.js';
import type { InternalAccountView } from '../accounts/schemas.js';
import type { LedgerService } from '../ledger/service.js';

export interface SandboxServiceDeps {
  database: Database;
  ledger: LedgerService;
  accounts: AccountService;
}

export function requireSandbox(ctx: ServiceContext): void {
  if (ctx.platform.mode !== 'SANDBOX') throw new ServiceError('SANDBOX_ONLY', 'this endpoint exists only on sandbox platforms');
}

/** Sandbox-only shortcuts that stand in for the outside world. */
export function createSandboxService({ database, ledger, accounts }: SandboxServiceDeps) {
  /** Credits an internal account at once, as if a deposit had arrived (ledger: SANDBOX_FUNDING → account). */
  async function fund(ctx: ServiceContext, accountId: string, amount: number): Promise<InternalAccountView> {
    requireSandbox(ctx);
    const account = await accounts.getAccount(database.db, ctx.platform.id, accountId);
    const source = await ledger.systemAccount(ctx.platform.id, account.currency, 'SANDBOX_FUNDING');
    return ctx.tx(async (trx) => {
      await ledger.record(trx, ctx.platform, [{ debit: source, credit: account.id, amount, code: 'SANDBOX_FUNDING' }]);
      return accounts.presentOne(trx, ctx.platform, account);
    });
  }

  return { fund };
}

export type SandboxService = ReturnType<typeof createSandboxService>;
