import { p256 } from '@noble/curves/nist.js';
import { seal } from './hpke.js';

/**
 * `encryptedWalletCredentials`: the wallet mnemonic sealed to the export's client key with the
 * session HPKE suite, wrapped the way wallet SDKs read export bundles:
 * `{"version":"v1.0.0","data":hex(JSON{encappedPublic, ciphertext, organizationId}),
 *   "dataSignature":hex(DER ECDSA P-256/SHA-256 over the data bytes),"enclaveQuorumPublic":hex}`.
 * The signature is made with Corridor's export signer key (derived from WALLET_ENCRYPTION_KEY),
 * whose public half is `enclaveQuorumPublic`.
 */
export async function buildExportBundle(options: {
  recipient: Uint8Array;
  secret: string;
  organizationId: string;
  signer: { privateKey: Uint8Array; publicKeyHex: string };
}): Promise<string> {
  const { enc, ciphertext } = await seal(options.recipient, new TextEncoder().encode(options.secret));
  const data = Buffer.from(
    JSON.stringify({
      encappedPublic: Buffer.from(enc).toString('hex'),
      ciphertext: Buffer.from(ciphertext).toString('hex'),
      organizationId: options.organizationId,
    }),
  );
  // noble signs SHA-256(data) with a low-S signature, which strict verifiers require.
  const signature = p256.sign(new Uint8Array(data), options.signer.privateKey, { format: 'der' });
  return JSON.stringify({
    version: 'v1.0.0',
    data: data.toString('hex'),
    dataSignature: Buffer.from(signature).toString('hex'),
    enclaveQuorumPublic: options.signer.publicKeyHex,
  });
}
