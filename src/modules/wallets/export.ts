import { clientKey, type WalletContext, type WalletCore, type WalletDeps } from './core.js';
import { buildExportBundle } from './crypto/export-bundle.js';
import type { IssuedChallenge, SignedRetryHeaders } from './signed-retry.js';

export interface ExportView {
  id: string;
  encryptedWalletCredentials: string;
}

export function createExportFlow(deps: WalletDeps, core: WalletCore) {
  const { engine, keys } = deps;

  /**
   * POST /internal-accounts/{id}/export: by signed retry; the payload binds the client key, and the
   * retry must carry the same one. Returns the wallet mnemonic sealed to it.
   */
  async function exportWallet(
    ctx: WalletContext,
    accountId: string,
    body: { clientPublicKey: string },
    headers: SignedRetryHeaders,
  ): Promise<{ status: 200; body: ExportView } | { status: 202; body: IssuedChallenge }> {
    const { platform } = ctx;
    await engine.refuseReplay(platform, headers);
    const account = await core.requireWallet(platform, accountId, 'id');
    const recipient = clientKey(body.clientPublicKey);
    const clientPublicKey = body.clientPublicKey.toLowerCase();
    const spec = { platform, accountId: account.id, action: 'EXPORT_WALLET', target: account.id, body: { clientPublicKey }, bind: { clientPublicKey } };
    const outcome = await engine.challengeOrVerify(spec, headers);
    if (outcome.kind === 'challenge') return { status: 202, body: outcome.challenge };
    const view = await ctx.tx(async (trx) => {
      const stored = await core.lockWallet(trx, platform, account.id);
      await engine.consume(trx, platform, outcome.signature);
      const mnemonic = keys.decrypt(stored, account.id);
      const bundle = await buildExportBundle({ recipient, secret: mnemonic, organizationId: account.id, signer: keys.exportSigner });
      return { id: account.id, encryptedWalletCredentials: bundle };
    });
    return { status: 200, body: view };
  }

  return { exportWallet };
}
