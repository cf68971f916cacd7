import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { p256 } from '@noble/curves/nist.js';
import { ServiceError } from '../../../core/errors.js';

/**
 * Keys derived from WALLET_ENCRYPTION_KEY: one encrypts wallet secrets at rest (AES-256-GCM), one
 * keys the OTP hashes (HMAC-SHA256, so a leaked table cannot be brute-forced offline), one signs
 * export bundles (P-256).
 */

/** Used when WALLET_ENCRYPTION_KEY is unset: fine for development, never for real funds. */
const DEVELOPMENT_KEY = '636f727269646f722d646576656c6f706d656e742d77616c6c65742d6b657921';

export interface WalletKeys {
  isDevelopmentKey: boolean;
  encrypt(plaintext: string, context: string): string;
  decrypt(stored: string, context: string): string;
  otpHash(challengeId: string, code: string): string;
  exportSigner: { privateKey: Uint8Array; publicKeyHex: string };
}

/**
 * Refuses to make a production platform's secret (a wallet's mnemonic, its UMA signing key) under
 * the development key, which anyone can read in the source. Secrets made before the key was set
 * stay readable; only new ones are refused, until the operator sets WALLET_ENCRYPTION_KEY.
 */
export function refuseDevelopmentKeyFor(keys: Pick<WalletKeys, 'isDevelopmentKey'>, platform: { mode: 'SANDBOX' | 'PRODUCTION' }): void {
  if (platform.mode !== 'PRODUCTION' || !keys.isDevelopmentKey) return;
  throw new ServiceError(
    'SERVICE_UNAVAILABLE',
    'this server has no WALLET_ENCRYPTION_KEY: production secrets are not made with the development key, which anyone can read; the operator must set it',
  );
}

function derive(master: Buffer, label: string): Buffer {
  return Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `corridor-wallets/${label}`, 32));
}

function signerFrom(seed: Buffer): { privateKey: Uint8Array; publicKeyHex: string } {
  let candidate = new Uint8Array(seed);
  // A 32-byte string is a valid P-256 scalar except with negligible probability; rehash if not.
  while (!p256.utils.isValidSecretKey(candidate)) candidate = new Uint8Array(derive(Buffer.from(candidate), 'export-signer-retry'));
  return { privateKey: candidate, publicKeyHex: Buffer.from(p256.getPublicKey(candidate, false)).toString('hex') };
}

export function createWalletKeys(walletEncryptionKey: string | undefined): WalletKeys {
  const master = Buffer.from(walletEncryptionKey ?? DEVELOPMENT_KEY, 'hex');
  const atRest = derive(master, 'at-rest');
  const otp = derive(master, 'otp');
  return {
    isDevelopmentKey: !walletEncryptionKey,
    encrypt(plaintext, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', atRest, iv).setAAD(Buffer.from(context));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return `v1.${Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url')}`;
    },
    decrypt(stored, context) {
      const raw = Buffer.from(stored.slice(3), 'base64url');
      try {
        const decipher = createDecipheriv('aes-256-gcm', atRest, raw.subarray(0, 12)).setAAD(Buffer.from(context));
        decipher.setAuthTag(raw.subarray(raw.length - 16));
        return Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString('utf8');
      } catch {
        // The authentication tag does not match: the secret was sealed under another key (the
        // operator changed or dropped WALLET_ENCRYPTION_KEY), or the stored value was altered.
        throw new ServiceError(
          'SERVICE_UNAVAILABLE',
          'a secret this operation needs cannot be opened with the server\'s WALLET_ENCRYPTION_KEY (it was sealed under another key); the operator must restore the key it was made with',
        );
      }
    },
    otpHash: (challengeId, code) => createHmac('sha256', otp).update(challengeId).update('\0').update(code).digest('hex'),
    exportSigner: signerFrom(derive(master, 'export-signer')),
  };
}
