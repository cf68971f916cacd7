import { invalidInput, ServiceError } from '../../core/errors.js';
import { isIdOf } from '../../core/ids.js';
import { presentSession, type WalletContext, type WalletCore, type WalletDeps } from './core.js';
import * as repo from './repository.js';
import type { AuthSessionView } from './schemas.js';
import type { IssuedChallenge, SignedRetryHeaders } from './signed-retry.js';

function sessionNotFound(): ServiceError {
  return new ServiceError('NOT_FOUND', 'session not found (unknown, expired or revoked)');
}

export function createSessionFlows(deps: WalletDeps, core: WalletCore) {
  const { database, clock, engine } = deps;

  /** GET /auth/sessions?accountId=: the account's active sessions (never their keys). */
  async function list(ctx: WalletContext, accountId: string): Promise<{ data: AuthSessionView[] }> {
    if (!isIdOf('InternalAccount', accountId)) throw invalidInput('querystring.accountId', 'accountId must be an InternalAccount id', 'format');
    const rows = await repo.activeSessions(database.db, ctx.platform.id, accountId, clock.now(ctx.platform));
    return { data: rows.map((row) => presentSession(row, row)) };
  }

  /** DELETE /auth/sessions/{id}: by signed retry; any active session of the account may sign, itself included. */
  async function revoke(ctx: WalletContext, id: string, headers: SignedRetryHeaders): Promise<{ status: 204 } | { status: 202; body: IssuedChallenge }> {
    const { platform } = ctx;
    await engine.refuseReplay(platform, headers);
    const session = await repo.findActiveSession(database.db, platform.id, id, clock.now(platform));
    if (!session) throw sessionNotFound();
    const spec = { platform, accountId: session.account_id, action: 'REVOKE_SESSION', target: id, type: session.type };
    const outcome = await engine.challengeOrVerify(spec, headers);
    if (outcome.kind === 'challenge') return { status: 202, body: outcome.challenge };
    await ctx.tx(async (trx) => {
      // Like every revocation: two sessions revoking each other wait in turn instead of deadlocking.
      await core.lockWallet(trx, platform, session.account_id);
      await engine.consume(trx, platform, outcome.signature);
      if (!(await repo.revokeSession(trx, id, clock.now(platform)))) throw sessionNotFound();
      return null;
    });
    return { status: 204 };
  }

  return { list, revoke };
}
